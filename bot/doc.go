// Package bot is bookbot's Slack side: the slash command, the booking and
// cancel flows, App Home, the review queue, the digest's messages and
// each person's reminders and agenda, served over Socket Mode. Slack
// payload types stay in this package.
//
// Where things live. Flow files stand on the shared files: a flow uses
// the shared files, not another flow's, but to hand work over (opening the
// booking form, refreshing App Home, reporting the review queue after a
// write, ending a Workflow Builder step); a shared file uses no flow's,
// but route.go, which lists them; and every Slack call goes through
// slackio.go. TestLayout keeps these rules, and names the hand-overs.
//
// The flows, one file each: its registration first, then its work
// (methods on *Bot), then its pure view functions.
//
//   - slots.go (event types and free slots), list.go (upcoming bookings
//     and cancelling), modal.go (the booking form), today.go (`today`).
//   - offer.go (`offer`: a card of free times in a conversation that the
//     people it names book from; its buttons and form), offercancel.go (a
//     guest cancelling the booking their own use of an offer made),
//     offerleft.go (the offers' sweep: times a stopped process left being
//     booked, settled by what their write did), compose.go (the message
//     shortcut "Offer times…": an offer posted in a message's
//     conversation), links.go (booking links: a link to an event type of a
//     booking page bookbot knows unfurls into an offer's card anyone books
//     from), steps.go (the Workflow Builder step "Offer times": an offer of
//     the owner's calendar posted by a workflow, whose step ends with its
//     first booking).
//   - personal.go (`remind` and `agenda`, their settings modal, and the
//     reminders and agendas the personal Runner sends through the Bot, its
//     Sender and Zones), account.go (`connect`, `disconnect`, `account`,
//     `notices`: a person's own calendar connected, a key the booking
//     service refused, a person Slack deactivated), review.go (the review
//     queue and the audit), home.go (App Home, the person's desk),
//     digest.go (`digest`, the digest's messages and its publisher).
//   - notices.go: the notices' publisher (new, moved and cancelled
//     bookings in the notice channel) and Alert.
//
// The shared files.
//
//   - bot.go: the Bot, its Config and the interfaces it needs (Booker,
//     SlackAPI, DigestPreviewer, Journal, StepEnder); Run and Handle,
//     which ack every envelope at once and start its work.
//   - route.go: only routing, at ack time. Each flow file registers what
//     it answers in one flow value (subcommands with their help lines,
//     action IDs, view callbacks, shortcuts, events, and the work it does
//     on its own, which Run starts); flows() lists them once, and the help
//     is made from them. Adding a subcommand is a flow file and its line
//     in flows().
//   - calendar.go: the calendar a person acts on, the one way every flow
//     reaches the booking API: calendarFor (actsOn, without counting as
//     their use of it), the calendars in use with their event types and
//     readers, NoCalendarError and what it says; booking pages' addresses.
//   - offercard.go: what the offer flows share: making an offer, the
//     calendar it books on, its card shown and shown again, and what
//     whoever books from it is told.
//   - slackio.go: every call to Slack: replies through response_url,
//     messages and direct messages, unfurls, views opened, updated and
//     published (signed, and bannered in a dry run), users' profiles, a
//     Workflow Builder step's end, and the history bookbot looks through:
//     SlackFinder, the one look in Slack for a post whose answer never
//     came, by what its metadata carries. The publishers post through it
//     with their own interfaces.
//   - render.go: the Block Kit primitives, the action IDs, the one
//     escaping rule, clip, the vocabulary of dates, and the pieces
//     several flows show (buttons, free slots by day, a day's bookings).
//   - words.go: what an outcome of a create or cancel says to a person, a
//     failure in words, and the words of reminder and agenda settings.
//   - metadata.go: what machines read of a message, its Slack message
//     metadata: the contract's event types and the booking in each.
//   - sign.go: what a booking form carries (its metadata, its inputs, and
//     the values of the buttons that open it again), and the signature
//     that proves bookbot made it.
//   - state.go and cache.go: what the bot keeps in memory (envelopes seen,
//     writes in flight, requester zones, event types, modals' slots).
//     Reminder and agenda settings are not kept here but in
//     Config.Personal, a personal.Store.
//   - dryrun.go and metrics.go: the dry-run banner, and what the bot
//     reports to its Metrics.
//   - zones.txt: the time zones the booking form offers for an attendee.
package bot
