// Package slacktest is a local stand-in for Slack: the Web API over real HTTP
// and Socket Mode over a real WebSocket, faithful enough that an unmodified
// slack-go client connects to it, receives envelopes, acks them and calls Web
// API methods against it.
//
// It backs bookbot's end-to-end tests and the local `bookbot demo` console.
// Everything it is told is recorded (calls, messages, views, acks) and can be
// waited on without polling. Slack's rules that bots trip over are enforced:
// trigger_id expiry and single use, view hashes, the 3-view stack, the
// 20,480-byte ack limit, Block Kit limits, channel membership for ephemeral
// messages, response_url use limits and token types.
//
//	srv := slacktest.NewServer(t)
//	api := slack.New(srv.BotToken(), slack.OptionAPIURL(srv.APIURL),
//		slack.OptionAppLevelToken(srv.AppToken()))
//	client := socketmode.New(api)
//	go client.RunContext(ctx)
//	ack, err := srv.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", UserID: "U1"})
//
// A test then works the bot the way a person would: BlockAction with InView
// or InMessage presses a button or picks an option (only options the element
// offers, only in input blocks with dispatch_action, only on the modal on
// top), SubmitInputs fills and submits a modal by action_id, Cancel closes
// it. The server applies a view_submission ack's response_action to its
// views, and refuses to submit a modal with an empty required input, as
// Slack's client does.
//
// Things Slack requires that catch bots out, enforced here too: the bot user
// (Options.BotUserID) must be a member of a channel to post in it;
// chat.postEphemeral needs the recipient in the channel; a user ID as
// channel posts into the App Home messages tab; views, messages and ack
// payloads are checked against Block Kit limits (invalid_arguments,
// invalid_blocks, with Slack-style response_metadata messages); app-level
// and bot tokens are not interchangeable (not_allowed_token_type).
//
// People talk too: Say posts a person's message, and a link in it to one
// of the app's unfurl domains sends link_shared, from the composer and
// then from the posted message; chat.unfurl shows the app's answer under
// the link (see links.go), and InUnfurl presses a button in it.
// MessageShortcut is a person choosing the app's shortcut in a message's
// menu. RunFunction is a workflow reaching the app's custom step
// (function_executed), which the app ends once with
// functions.completeSuccess, its outputs checked against the step's, or
// functions.completeError.
//
// Several clients can connect at once, as replicas of a bot do. By default
// the newest connection gets every envelope; with Options.Spread they take
// turns, as Slack spreads envelopes over an app's connections, and
// ToConnection sends one to a chosen connection (see LiveConnections),
// a redelivery included.
package slacktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/internal/loopback"
)

// Defaults used when Options leave a field empty.
const (
	DefaultBotToken  = "xoxb-test-bot-token"
	DefaultAppToken  = "xapp-test-app-token"
	DefaultTeamID    = "T0TEST"
	DefaultBotUserID = "UBOT"
	DefaultAppID     = "A0TEST"
	DefaultBotID     = "B0TEST"
	DefaultBotName   = "bookbot"

	defaultPingInterval = 10 * time.Second
	teamDomain          = "bookbot-test"
	// verificationToken is the deprecated per-app token Slack still puts in
	// every payload.
	verificationToken = "slacktest-verification-token"
)

// Slack's limits that the server enforces.
const (
	// MaxAckBytes is the Socket Mode response size Slack drops silently.
	// slack-go (empirically, against Slack) treats a response of this many
	// bytes or more as dropped, and so does this server.
	MaxAckBytes = 20 * 1024
	// AckTimeout is how long Slack waits for an ack before it gives up
	// (slash commands show operation_timeout; response_action is ignored).
	AckTimeout = 3 * time.Second
	// TriggerTTL is how long a trigger_id can be exchanged for a modal.
	TriggerTTL = 3 * time.Second
	// MaxViewBytes is the size above which views.* answer view_too_large.
	MaxViewBytes = 250_000
	// MaxViewStack is how many modals can be stacked with views.push.
	MaxViewStack = 3
	// ResponseURLUses and ResponseURLTTL bound how often and how long a
	// response_url can be posted to.
	ResponseURLUses = 5
	ResponseURLTTL  = 30 * time.Minute
)

var (
	// ErrAckTooLarge is returned (with the Ack) when an ack is MaxAckBytes or
	// larger: Slack drops such an ack as if it had never arrived.
	ErrAckTooLarge = errors.New("slacktest: ack is 20,480 bytes or larger and was dropped, as Slack does")
	// ErrClosed is returned by waits and deliveries after Close.
	ErrClosed = errors.New("slacktest: server closed")
	// ErrUnknownEnvelope is returned by Redeliver for an envelope ID the
	// server never sent.
	ErrUnknownEnvelope = errors.New("slacktest: unknown envelope ID")
	// ErrNoConnection is returned by a delivery targeted with ToConnection,
	// and by DropConnection, when that connection is not live.
	ErrNoConnection = errors.New("slacktest: no live Socket Mode connection with that ID")
	// ErrResponseAction is returned (with the Ack) when a view_submission ack
	// carries a response_action Slack would reject (invalid view, stack full,
	// errors for a non-input block, unknown action).
	ErrResponseAction = errors.New("slacktest: view_submission ack rejected")
	// ErrViewClosed is returned when a person is asked to act on a closed view.
	ErrViewClosed = errors.New("slacktest: view is closed")
	// ErrUnknownView is returned when a view ID is not known to the server.
	ErrUnknownView = errors.New("slacktest: unknown view")
	// ErrRequiredInput is returned by Submit when a non-optional input is
	// empty: Slack's client refuses to submit such a modal.
	ErrRequiredInput = errors.New("slacktest: required input is empty; Slack would not submit the modal")
	// ErrInvalidAction is returned when a helper is asked to do something a
	// person could not do in Slack (pick an option that is not offered, act
	// on an element that does not exist).
	ErrInvalidAction = errors.New("slacktest: not possible in Slack")
)

// Options configure a Server. The zero value is usable.
type Options struct {
	BotToken, AppToken string // defaults DefaultBotToken, DefaultAppToken
	TeamID             string // default DefaultTeamID
	BotUserID          string // the bot's user ID, default DefaultBotUserID
	AppID              string // default DefaultAppID
	// PingInterval is how often the server sends WebSocket pings; slack-go
	// reconnects when none arrives within 30 s. Default 10 s.
	PingInterval time.Duration
	// Now is the server's clock (trigger expiry, ack lateness, timestamps).
	// Default time.Now.
	Now func() time.Time
	// Spread hands envelopes to the live connections in turn, in the order
	// they were opened, skipping those gone, as Slack spreads them over an
	// app's connections (several replicas of a bot); a redelivery then
	// goes to the next in turn. By default every envelope goes to the
	// newest connection. ToConnection overrides either for one delivery.
	Spread bool
	// UnfurlDomains are the app's unfurl domains (the manifest's
	// unfurl_domains): a link to one of them, or to a subdomain, in a
	// person's message (Say) sends the app link_shared.
	UnfurlDomains []string
}

// User is a workspace member answered by users.info.
type User struct {
	ID       string
	Name     string // handle, e.g. "ada"
	RealName string
	TZ       string // IANA zone; "UTC" when empty
	Email    string
	IsBot    bool
}

// Channel is a conversation the server knows. Members are user IDs; the bot
// (Options.BotUserID) must be listed for the bot to post into the channel.
type Channel struct {
	ID        string
	Name      string
	Members   []string
	IsPrivate bool
}

// SlashCommand is what a person types. Empty fields are filled in: ChannelID
// defaults to the person's DM with the app, TeamID to the server's team.
type SlashCommand struct {
	Command, Text, UserID, ChannelID, TeamID string
}

// Ack is a Socket Mode acknowledgement received for an envelope.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // the ack's payload, nil when there was none
	Raw        []byte          // the whole WebSocket message
	Delay      time.Duration   // delivery → ack, on the server clock
	Sent       time.Time       // when the envelope went onto the socket, on the server clock
	Envelope   json.RawMessage // the envelope as delivered (payload included)
	ConnID     int             // the connection the ack came in on (ConnInfo.ID)
	Late       bool            // acked after AckTimeout: Slack ignored it
	Dropped    bool            // MaxAckBytes or larger: Slack dropped it
	Duplicate  bool            // a second ack for the same delivery: ignored
}

// Call is one Web API request.
type Call struct {
	Method string
	Form   url.Values      // form or query fields, without "token"
	JSON   json.RawMessage // the body when it was JSON
	Token  string          // "bot", "app" or "invalid" ("" for response_url posts); never the token itself
	At     time.Time       // when it was answered
	// Received is when the request had been read, before the server
	// answered it: a measurement that excludes the server's own work.
	Received time.Time
	Status   int    // HTTP status answered
	Error    string // the Slack error code answered, "" when ok
}

// Message is something the bot made appear in Slack.
type Message struct {
	// Kind is "message" (chat.postMessage), "ephemeral" (chat.postEphemeral),
	// "update" (chat.update), "delete" (chat.delete), "response_url" (a post
	// to a response_url), "ack" (a slash command ack payload Slack shows),
	// "user" (a person's message, Say) or "unfurl" (chat.unfurl of a link
	// in a person's message: TS is that message's, or the composer's
	// unfurl_id with Channel "COMPOSER").
	Kind    string
	Channel string // as given by the bot
	User    string // the ephemeral recipient, or the person who triggered
	TS      string
	Text    string
	Blocks  json.RawMessage
	// ThreadTS is the thread a message was posted into.
	ThreadTS string
	// Broadcast is a thread reply posted with reply_broadcast: it is also
	// shown in the channel.
	Broadcast bool
	// Metadata is the message metadata of a chat.postMessage, chat.update
	// or response_url post, as sent; nil for none.
	Metadata json.RawMessage
	// Link is the link an unfurl is of, and Attachment its place among the
	// message's links, from 1: the attachment_id Slack gives it.
	Link       string
	Attachment int
	// OriginalTS is the message a response_url post replaced or deleted.
	OriginalTS      string
	ReplaceOriginal bool
	DeleteOriginal  bool
	ResponseType    string
	At              time.Time
}

// View is the current state of a modal or Home tab.
type View struct {
	ID          string
	ExternalID  string
	CallbackID  string
	Type        string // "modal" or "home"
	TriggerUser string // the person who sees it
	Hash        string
	Title       string
	// PrivateMetadata is the view's private_metadata.
	PrivateMetadata string
	// Raw is the view exactly as the bot last sent it.
	Raw json.RawMessage
	// Blocks are the blocks as Slack renders them (block_id and action_id
	// filled in where the bot left them out).
	Blocks json.RawMessage
	// State is what the person has entered, keyed by block_id then action_id.
	State map[string]map[string]slack.BlockAction
	// Errors are the input errors shown after a response_action "errors".
	Errors         map[string]string
	Closed         bool
	Stack          int // position in the modal stack, 1 for the root
	RootViewID     string
	PreviousViewID string
	NotifyOnClose  bool
	ClearOnClose   bool
	// Updates counts how often the view's content was replaced.
	Updates int
}

// Server is the Slack stand-in.
type Server struct {
	// APIURL is the Web API base, ending in "/api/".
	APIURL string
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string

	opts     Options
	tb       TB
	hs       *loopback.Server
	upgrader websocket.Upgrader
	done     chan struct{}
	wg       sync.WaitGroup

	mu      sync.Mutex
	changed chan struct{}
	closed  bool
	seq     int64

	users        map[string]User
	channels     map[string]Channel
	dms          map[string]string // DM channel ID → user ID
	calls        []Call
	messages     []Message
	posted       map[string]*postedMessage // ts → current content
	acks         []Ack
	views        map[string]*viewRec
	viewOrder    []string
	homes        map[string]string // user → home view ID
	triggers     map[string]*trigger
	responseURLs map[string]*responseURL
	tickets      map[string]bool
	composers    map[string]composer       // unfurl_id → links a person is typing
	unfurlIDs    map[string]string         // a posted message's unfurl_id → its ts
	unfurls      map[string]*postedMessage // unfurlKey → the app's unfurl
	steps        map[string]*stepRun       // function_execution_id → run

	conns      []*wsConn // live (hello sent), in opening order (by ID)
	opened     int
	spreadLast int // the connection Spread served last
	envelopes  map[string]*envelope
	pending    map[string][]*delivery

	failNext  map[string][]string
	latency   map[string]time.Duration
	held      map[string]chan struct{} // calls wait until the channel is closed
	heldCalls map[string]int           // calls that arrived while held, in total
	rateLimit map[string][]rateLimit
	stall     map[string][]bool // per method, whether each next stalled call is carried out
	stalled   map[string]int    // calls stalled, in total
}

type trigger struct {
	user   string
	viewID string // the view the interaction came from, for views.push
	issued time.Time
	used   bool
}

type responseURL struct {
	channel    string
	user       string
	originalTS string
	issued     time.Time
	uses       int
}

type postedMessage struct {
	channel   string // as given
	dm        string // the DM ID when posted to a user ID
	text      string
	blocks    json.RawMessage
	ephemeral bool
	deleted   bool
	user      string
	threadTS  string
	broadcast bool            // a thread reply also shown in the channel
	metadata  json.RawMessage // as posted, nil for none
	person    string          // who wrote it, when a person did (Say): the bot cannot edit it
	links     []string        // the links of a person's message the app may unfurl
}

// New starts a server on 127.0.0.1. Close it when done.
func New(opts Options) *Server {
	return newServer(opts, nil)
}

// TB is the part of testing.TB that NewServer uses; *testing.T and
// *testing.B satisfy it. The package declares it rather than importing
// testing, so that bookbot, which runs the stand-in for `bookbot demo`, does
// not link the testing package.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// NewServer starts a server for a test and closes it at the end of the test.
// Calls to unknown Web API methods fail the test.
func NewServer(t TB, opts ...func(*Options)) *Server {
	t.Helper()
	var o Options
	for _, f := range opts {
		f(&o)
	}
	s := newServer(o, t)
	t.Cleanup(s.Close)
	return s
}

func newServer(opts Options, tb TB) *Server {
	if opts.BotToken == "" {
		opts.BotToken = DefaultBotToken
	}
	if opts.AppToken == "" {
		opts.AppToken = DefaultAppToken
	}
	if opts.TeamID == "" {
		opts.TeamID = DefaultTeamID
	}
	if opts.BotUserID == "" {
		opts.BotUserID = DefaultBotUserID
	}
	if opts.AppID == "" {
		opts.AppID = DefaultAppID
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = defaultPingInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		opts:         opts,
		tb:           tb,
		done:         make(chan struct{}),
		changed:      make(chan struct{}),
		users:        map[string]User{},
		channels:     map[string]Channel{},
		dms:          map[string]string{},
		posted:       map[string]*postedMessage{},
		views:        map[string]*viewRec{},
		homes:        map[string]string{},
		triggers:     map[string]*trigger{},
		responseURLs: map[string]*responseURL{},
		tickets:      map[string]bool{},
		composers:    map[string]composer{},
		unfurlIDs:    map[string]string{},
		unfurls:      map[string]*postedMessage{},
		steps:        map[string]*stepRun{},
		envelopes:    map[string]*envelope{},
		pending:      map[string][]*delivery{},
		failNext:     map[string][]string{},
		latency:      map[string]time.Duration{},
		held:         map[string]chan struct{}{},
		heldCalls:    map[string]int{},
		rateLimit:    map[string][]rateLimit{},
		stall:        map[string][]bool{},
		stalled:      map[string]int{},
	}
	s.upgrader = websocket.Upgrader{
		// slack-go sends Origin https://api.slack.com; anything goes here.
		CheckOrigin:     func(*http.Request) bool { return true },
		ReadBufferSize:  32 * 1024,
		WriteBufferSize: 32 * 1024,
	}
	s.users[opts.BotUserID] = User{ID: opts.BotUserID, Name: DefaultBotName, RealName: "Bookbot", TZ: "UTC", IsBot: true}

	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/link", s.serveLink)
	mux.HandleFunc("/link/", s.serveLink)
	mux.HandleFunc("/commands/", s.serveResponseURL)
	mux.HandleFunc("/actions/", s.serveResponseURL)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.reportf("slacktest: request to unknown path %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	})
	hs := loopback.Start(mux)
	// Under the lock the handlers hold: a client in another process learns
	// the address from the test, not through anything the race detector
	// sees.
	s.mu.Lock()
	s.hs = hs
	s.URL = hs.URL
	s.APIURL = hs.URL + "/api/"
	s.mu.Unlock()
	return s
}

// Dialled is how many connections clients have opened to the server so
// far (Web API, response URLs and WebSockets alike): a client that reuses
// its connections dials few.
func (s *Server) Dialled() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hs.Accepted()
}

// Close disconnects every client and stops the server. It is safe to call
// more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	conns := s.conns
	s.conns = nil
	s.notifyLocked()
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.c.Close()
	}
	s.hs.Close()
	s.wg.Wait()
}

// BotToken is the bot token the server accepts.
func (s *Server) BotToken() string { return s.opts.BotToken }

// AppToken is the app-level token the server accepts.
func (s *Server) AppToken() string { return s.opts.AppToken }

// TeamID is the workspace ID.
func (s *Server) TeamID() string { return s.opts.TeamID }

// BotUserID is the bot's user ID.
func (s *Server) BotUserID() string { return s.opts.BotUserID }

// AddUser adds or replaces a workspace member.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
	s.notifyLocked()
}

// AddChannel adds or replaces a channel.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Members = slices.Clone(c.Members)
	s.channels[c.ID] = c
	s.notifyLocked()
}

// DMChannel is the ID of the app's DM (App Home messages tab) with a user.
func (s *Server) DMChannel(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dmLocked(userID)
}

func (s *Server) dmLocked(userID string) string {
	id := "D" + userID
	if len(userID) > 1 && (userID[0] == 'U' || userID[0] == 'W') {
		id = "D" + userID[1:]
	}
	s.dms[id] = userID
	return id
}

// Calls returns every Web API call so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		out[i] = copyCall(c)
	}
	return out
}

// Messages returns everything the bot posted, updated or deleted, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = copyMessage(m)
	}
	return out
}

// MessagesFrom returns what Messages returns from the i-th message on: a
// long test reads what each of its steps added without copying all that
// came before.
func (s *Server) MessagesFrom(i int) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.messages) {
		return nil
	}
	out := make([]Message, 0, len(s.messages)-i)
	for _, m := range s.messages[max(i, 0):] {
		out = append(out, copyMessage(m))
	}
	return out
}

// Acks returns every ack received, in order, including dropped ones.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Ack, len(s.acks))
	for i, a := range s.acks {
		out[i] = copyAck(a)
	}
	return out
}

// Views returns the current state of every view, in the order opened.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]View, 0, len(s.viewOrder))
	for _, id := range s.viewOrder {
		out = append(out, s.views[id].snapshot())
	}
	return out
}

// ViewsFrom returns what Views returns from the i-th view opened on.
func (s *Server) ViewsFrom(i int) []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.viewOrder) {
		return nil
	}
	out := make([]View, 0, len(s.viewOrder)-i)
	for _, id := range s.viewOrder[max(i, 0):] {
		out = append(out, s.views[id].snapshot())
	}
	return out
}

// View returns the current state of one view.
func (s *Server) View(id string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.views[id]
	if !ok {
		return View{}, false
	}
	return r.snapshot(), true
}

// HomeView returns the Home tab last published for a user.
func (s *Server) HomeView(userID string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.homes[userID]
	if !ok {
		return View{}, false
	}
	return s.views[id].snapshot(), true
}

// WaitMessage blocks until a message matching match has been recorded (the
// first one in order) or ctx is done.
func (s *Server) WaitMessage(ctx context.Context, match func(Message) bool) (Message, error) {
	var found Message
	err := s.waitFor(ctx, func() bool {
		for _, m := range s.messages {
			if match(m) {
				found = copyMessage(m)
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitView blocks until a view matching match exists or ctx is done.
func (s *Server) WaitView(ctx context.Context, match func(View) bool) (View, error) {
	var found View
	err := s.waitFor(ctx, func() bool {
		for _, id := range s.viewOrder {
			if v := s.views[id].snapshot(); match(v) {
				found = v
				return true
			}
		}
		return false
	})
	return found, err
}

// WaitCall blocks until method has been called (returning the first such
// call) or ctx is done. The call's effects are visible when it returns.
func (s *Server) WaitCall(ctx context.Context, method string) (Call, error) {
	calls, err := s.WaitCalls(ctx, method, 1)
	if err != nil {
		return Call{}, err
	}
	return calls[0], nil
}

// WaitCalls blocks until method has been called at least n times and
// returns those calls, or until ctx is done.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	var found []Call
	err := s.waitFor(ctx, func() bool {
		found = found[:0]
		for _, c := range s.calls {
			if c.Method == method {
				found = append(found, copyCall(c))
			}
		}
		return len(found) >= n
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// Changed returns a channel that is closed at the next change of recorded
// state (a call, message, view, ack or connection), for a console that
// redraws when something happens. Call it again after each change.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// FailNext makes the next call to method answer {"ok":false,"error":slackError}.
// Calls queue: FailNext twice fails the next two calls.
func (s *Server) FailNext(method, slackError string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext[method] = append(s.failNext[method], slackError)
}

// SetLatency delays every call to method by d (0 removes the delay).
func (s *Server) SetLatency(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		delete(s.latency, method)
		return
	}
	s.latency[method] = d
}

// Hold makes calls to method ("response_url" for posts to response URLs)
// wait until release is called, so a test can have things happen while
// the bot's answer is on its way. A held call also ends, unanswered and
// unrecorded, when its client gives up (a timeout) or the server closes,
// so Hold without release stands for a Slack that never answers.
func (s *Server) Hold(method string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.held[method] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.held[method] == ch {
				delete(s.held, method)
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// WaitHeld blocks until n calls to method have arrived while it was held
// (in total, answered or not), or ctx is done: the client is waiting on
// the n-th, and gave up on or was answered for the ones before.
func (s *Server) WaitHeld(ctx context.Context, method string, n int) error {
	return s.waitFor(ctx, func() bool { return s.heldCalls[method] >= n })
}

// wait delays a call to method by its latency and any hold; false means the
// request or the server ended first.
func (s *Server) wait(r *http.Request, method string) bool {
	s.mu.Lock()
	delay, held := s.latency[method], s.held[method]
	if held != nil {
		s.heldCalls[method]++
		s.notifyLocked()
	}
	s.mu.Unlock()
	var timer <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timer = t.C
	}
	for timer != nil || held != nil {
		select {
		case <-timer:
			timer = nil
		case <-held:
			held = nil
		case <-r.Context().Done():
			return false
		case <-s.done:
			return false
		}
	}
	return true
}

// RateLimitNext makes the next call to method answer HTTP 429 with a
// Retry-After header of retryAfter (rounded up to whole seconds, as Slack
// sends them).
func (s *Server) RateLimitNext(method string, retryAfter time.Duration) {
	s.RateLimitAfter(method, 0, retryAfter)
}

// RateLimitAfter answers the next n calls to method as usual and the one
// after them as RateLimitNext does. Rate limits queue: each counts its n
// from the call after the one before it.
func (s *Server) RateLimitAfter(method string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rateLimit[method] = append(s.rateLimit[method], rateLimit{after: n, retryAfter: retryAfter})
}

// rateLimit is a 429 to answer, after that many calls answered as usual.
type rateLimit struct {
	after      int
	retryAfter time.Duration
}

// waitFor blocks until cond (called with s.mu held) is true.
func (s *Server) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return ErrClosed
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return ErrClosed
		}
	}
}

// notifyLocked wakes every waiter.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) now() time.Time { return s.opts.Now() }

func (s *Server) nextLocked() int64 {
	s.seq++
	return s.seq
}

// tsLocked returns a message timestamp unique on this server.
func (s *Server) tsLocked() string {
	return fmt.Sprintf("%d.%06d", s.now().Unix(), s.nextLocked()%1_000_000)
}

func (s *Server) reportf(format string, args ...any) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if s.tb != nil && !closed {
		s.tb.Errorf(format, args...)
	}
}

// blockKitBreach fails the test (under NewServer) when the bot sends
// anything Slack would reject for Block Kit limits, besides answering with
// Slack's error: a breach is a bug even when the bot copes with the error.
// It may run with s.mu held, so it does not take it; the server only
// serves while the test runs.
func (s *Server) blockKitBreach(what string, msgs []string) {
	if s.tb != nil {
		s.tb.Errorf("slacktest: Block Kit breach in a %s: %s", what, strings.Join(msgs, "; "))
	}
}

func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func cloneRaw(r []byte) []byte {
	if r == nil {
		return nil
	}
	return slices.Clone(r)
}

func copyCall(c Call) Call {
	c.Form = url.Values(maps.Clone(map[string][]string(c.Form)))
	for k, v := range c.Form {
		c.Form[k] = slices.Clone(v)
	}
	c.JSON = cloneRaw(c.JSON)
	return c
}

func copyMessage(m Message) Message {
	m.Blocks = cloneRaw(m.Blocks)
	m.Metadata = cloneRaw(m.Metadata)
	return m
}

func copyAck(a Ack) Ack {
	a.Payload = cloneRaw(a.Payload)
	a.Raw = cloneRaw(a.Raw)
	a.Envelope = cloneRaw(a.Envelope)
	return a
}
