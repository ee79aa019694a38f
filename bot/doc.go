// Package bot is bookbot's Slack side: the slash command, the booking and
// cancel flows, App Home, the review queue, the digest's messages and
// each person's reminders and agenda, served over Socket Mode. Slack
// payload types stay in this package.
//
// Where things live:
//
//   - bot.go: the Bot, its Config and the interfaces it needs (Booker,
//     SlackAPI, DigestPreviewer); Run and Handle, which ack every envelope at
//     once and start its work.
//   - route.go: only routing, at ack time: which subcommand, button,
//     submission or event starts which flow. Adding a subcommand is one
//     line here and one flow file.
//   - slackio.go: every call back to Slack that is not a view of a flow:
//     replies through response_url, direct messages, the submitted
//     view's update.
//   - One file per flow, its work (methods on *Bot) first and its pure
//     view functions after: slots.go (event types and free slots),
//     list.go (upcoming bookings and cancelling), modal.go (the booking
//     form), review.go (the review queue and the audit), home.go (App
//     Home, the person's desk), digest.go (the digest's messages and its
//     publisher), personal.go (`today`, `remind` and `agenda`, their
//     settings modal, and the reminders and agendas the personal Runner
//     sends through the Bot, its Sender and Zones).
//   - words.go: what an outcome of a create or cancel says to a person.
//   - render.go: the Block Kit primitives and the one escaping rule, clip
//     and date vocabulary every message uses.
//   - state.go and cache.go: what the bot keeps in memory (envelopes seen,
//     writes in flight, requester zones, event types, modals' slots).
//     Reminder and agenda settings are not kept here but in
//     Config.Personal, a personal.Store.
//   - dryrun.go and metrics.go: the dry-run banner, and what the bot
//     reports to its Metrics.
package bot
