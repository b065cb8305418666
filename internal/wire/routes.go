package wire

import (
	"net/http"
	"reflect"

	"github.com/locatorhq/locator"
	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/workflow"
)

// op is one route of the account API as both ends know it: its spec,
// and by its type parameters what it takes (Req; noBody: nothing, with
// query: its query parameters) and answers (Resp; with stream: one line
// of it). Each path is written here once: server.table gives each op its
// handler, the Client calls it by its op (call), and TestOpenAPI
// publishes the table.
type op[Req, Resp any] struct{ spec }

// spec is a route's method and path, and how it is carried.
type spec struct {
	method, path string
	// doc says what the route does, for the published document.
	doc           string
	query, stream bool
	// open routes are served without a session (hello and its proof).
	open bool
	// person routes are a follower process's own: its question stream,
	// its replies, a person's answer, the job runs it hands over. A bearer
	// caller (see bearerCaller), which proves no key pair, is no person
	// and runs no job, is refused them, as it is the open routes.
	person bool
}

// noBody is the Req of a route that takes no body.
type noBody struct{}

// post is the op of a call of the API: its request the body of a POST to
// path, its result the answer.
func post[Req, Resp any](path, doc string) op[Req, Resp] {
	return op[Req, Resp]{spec{method: "POST", path: path, doc: doc}}
}

// streamOf is the op of a stream (GET): its request, if any, in the query.
func streamOf[Req any](path, doc string) op[Req, message] {
	return op[Req, message]{spec{method: "GET", path: path, doc: doc, query: reflect.TypeFor[Req]() != reflect.TypeFor[noBody](), stream: true}}
}

var (
	opHello = op[noBody, Hello]{spec{method: "GET", path: "/v1/hello", open: true,
		doc: "Who owns the account, through which database, with a fresh challenge (nonce) to prove the key pair on."}}
	opSession = op[proof, earnedSession]{spec{method: "POST", path: "/v1/session", open: true,
		doc: "Earns a session: the hello's challenge answered with the account's key pair; the owner proves it back."}}

	opLocate      = post[account.LocateRequest, account.LocateResult]("/v1/locate", "Ensures located shares, quoting only the shortfall; answers the workflows started (follow them).")
	opQuote       = post[account.QuoteRequest, account.LocateResult]("/v1/quote", "Asks the price of located shares without taking it: a price check per item, its offer cancelled at once.")
	opCreditBack  = post[account.CreditBackRequest, account.CreditBackResult]("/v1/credit-back", "Returns unused located shares to the broker.")
	opShort       = post[account.ShortRequest, account.ShortResult]("/v1/short", "Ensures the locate, checks the sizing and places one Sell/Open order; answers when it is working or final.")
	opPlaceOrder  = post[account.PlaceOrderRequest, workflow.Order]("/v1/place-order", "Places an order under its write-ahead clientOrderId; answers when it is working or final.")
	opCancelOrder = post[account.CancelOrderRequest, workflow.Order]("/v1/cancel-order", "Cancels a working order locator placed; answers how it ended.")
	opStatus      = post[account.StatusRequest, account.Status]("/v1/status", "The account as its owner sees it now.")
	opFees        = post[account.FeesRequest, account.FeesResult]("/v1/fees", "Syncs a window of the cash ledger and reconciles the locate fees in it.")
	opToday       = post[account.TodayRequest, account.Today]("/v1/today", "The account's trading day: positions, working orders, today's locates and spend.")
	opRead        = post[account.ReadRequest, account.ReadResult]("/v1/read", "What the broker says about the account now, one record kind a request (GETs only).")
	opRecords     = post[account.RecordsRequest, account.Records]("/v1/records", "What the owner recorded of the account, one kind a request: workflows and orders, a log, job runs, the budget left.")
	opReport      = post[account.ReportRequest, locator.Report]("/v1/report", "Syncs the cash ledger of a range's fee check and reports what the locates cost and what they were used for.")
	opAudit       = post[account.AuditRequest, locator.AuditTrail]("/v1/audit", "The Reg SHO audit trail of a range: every short sale and what covered it (reads the order book).")
	opPlan        = post[account.PlanRequest, account.PlanResult]("/v1/plan", "How many shares of each symbol of a watchlist to locate before the open, from the last trading days.")
	opSize        = post[account.SizeRequest, locator.Sizing]("/v1/size", "How many shares of a symbol can be shorted now at a price, and what a target would take (GETs only).")
	opAnswer      = person(post[account.AnswerRequest, struct{}]("/v1/answer", "A person's answer to the offer waiting on a workflow."))
	opCancel      = post[account.CancelRequest, struct{}]("/v1/cancel", "Withdraws an unfinished workflow.")
	opJob         = person(post[jobCall, account.JobResult]("/v1/job", "Runs one run of a job of a jobs file on the owner's engine; /v1/job/stop with its ref drains it."))
	opJobStop     = person(post[jobStop, struct{}]("/v1/job/stop", "Drains the job run of that ref (its grace for the step in flight)."))

	opFollow    = streamOf[account.FollowRequest]("/v1/follow", "Every change of a workflow (from its start with fromStart=1), one line each ({update}), then its final record ({end}) or {error}.")
	opSubscribe = streamOf[noBody]("/v1/subscribe", "Every change of the account's workflows and orders, one line each ({update}), for as long as the stream stays open.")
	opWatch     = streamOf[account.WatchRequest]("/v1/watch", "One of the broker's push streams of the account as the owner follows it (stream=pnl: the P&L model; stream=orders: the order book, then each order's next state), one line each ({watch}), the stream's state on every line, until the stream closes or fails ({error}).")
	opQuestions = person(streamOf[noBody]("/v1/questions", "The questions of this caller's requests ({question}), and those withdrawn ({withdrawn}); answer each by /v1/reply."))
	opReply     = person(post[reply, struct{}]("/v1/reply", "Answers a question put on the caller's question stream."))
)

// person is o as a person route (see spec).
func person[Req, Resp any](o op[Req, Resp]) op[Req, Resp] {
	o.person = true
	return o
}

// route is op served by h.
func (o op[Req, Resp]) route(h func(http.ResponseWriter, *http.Request)) route {
	r := route{spec: o.spec, out: reflect.TypeFor[Resp](), h: h}
	if in := reflect.TypeFor[Req](); in != reflect.TypeFor[noBody]() {
		r.in = in
	}
	return r
}
