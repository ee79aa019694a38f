module github.com/bookbot/bookbot

go 1.26.8

require (
	github.com/caarlos0/env/v11 v11.4.2 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/slack-go/slack v0.35.0 // indirect
)
