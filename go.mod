module github.com/bookbot/bookbot

go 1.26.8

require (
	github.com/caarlos0/env/v11 v11.4.2
	github.com/gorilla/websocket v1.5.3
	github.com/robfig/cron/v3 v3.0.1
	github.com/slack-go/slack v0.35.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/prometheus/client_golang v1.25.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
