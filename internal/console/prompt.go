package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/brokercode"
	"github.com/locatorhq/locator/internal/safetext"
)

// Prompter asks a person at a terminal.
type Prompter struct {
	// Lines are the person's answer lines (one reader for the process, so
	// an answer typed late is never lost to a prompt that gave up).
	Lines func() <-chan string
	// Err receives the questions; Display counts an offer's seconds down.
	Err     io.Writer
	Display *Display
	// Answer, when set, answers an offer through the account (as another
	// shell would): how a side of a pair other than the one asked about
	// is taken.
	Answer func(context.Context, account.AnswerRequest) error
}

// Asker answers the questions of this command's requests at the
// terminal: an offer to take, its seconds left counting down, a short's
// order to confirm, or the unused shares about to be credited back. One reader serves every prompt of the process, so an
// answer typed late is never lost to a prompt that gave up.
func (p *Prompter) Asker(cmd context.Context) func(context.Context, account.Question) bool {
	return func(q context.Context, ques account.Question) bool {
		switch {
		case ques.Offer != nil && len(ques.Sides) > 1 && p.Answer != nil:
			return p.chooseSide(cmd, q, ques)
		case ques.Offer != nil:
			o := ques.Offer
			d := p.Display
			return p.yes(cmd, q, func() func() {
				return countdown(d.w, d.live, d.clk, ques.Deadline, func(left time.Duration) string {
					return fmt.Sprintf("Accept %s %d shares at %s (%s) = %s? %s left [y/N] ",
						o.Symbol, o.Shares, Price4(o.Price), brokercode.LocateTypeForCode(o.LocateType), Money(o.Total), left)
				})
			})
		case ques.Order != nil:
			o := ques.Order
			where := o.Route
			if where == "" {
				where = "the default: SMART on live, the broker's on paper"
			}
			return p.yes(cmd, q, p.says(fmt.Sprintf("%s (route %s)? [y/N] ", OrderWords(o), where)))
		case len(ques.Credits) > 0:
			return p.yes(cmd, q, p.says(fmt.Sprintf("Credit back the unused %s? [y/N] ", credits(ques.Credits))))
		}
		return false
	}
}

// chooseSide asks which side of a Reg SHO pair to take, each numbered
// with its price and total, or none (y takes the side asked about, as at
// any offer): the side asked about (ques.Offer) is taken by the yes
// returned, another by an answer naming its leg, which
// the offer's owner acts on first (the yes then finds it decided). An
// answer that is none of these is asked again.
func (p *Prompter) chooseSide(cmd, q context.Context, ques account.Question) bool {
	o, d := ques.Offer, p.Display
	var choices []string
	for i, s := range ques.Sides {
		choices = append(choices, fmt.Sprintf("[%d] %s at %s = %s", i+1, brokercode.LocateTypeForCode(s.LocateType), Price4(s.Price), Money(s.Total)))
	}
	keys := "1-" + strconv.Itoa(len(ques.Sides))
	line, ok := p.understood(cmd, q, func() func() {
		return countdown(d.w, d.live, d.clk, ques.Deadline, func(left time.Duration) string {
			return fmt.Sprintf("Take %s %d shares, a Reg SHO pair: %s? %s left [%s/N] ", o.Symbol, o.Shares, strings.Join(choices, ", "), left, keys)
		})
	}, func(line string) bool {
		n, err := strconv.Atoi(line)
		return yesNo(line) || err == nil && n >= 1 && n <= len(ques.Sides)
	}, "y, n or a side's number ("+keys+")")
	if !ok || line == "y" || line == "yes" {
		return ok // the side asked about: the policy's choice
	}
	n, err := strconv.Atoi(line)
	if err != nil {
		return false // a no
	}
	side := ques.Sides[n-1]
	if side.QuoteReqID == o.QuoteReqID {
		return true
	}
	if err := p.Answer(cmd, account.AnswerRequest{ID: o.WorkflowID, Accept: true, Offer: side.QuoteReqID, Price: side.Price, Via: "the prompt"}); err != nil {
		fmt.Fprintf(p.Err, "the %s side was not taken: %v\n", brokercode.LocateTypeForCode(side.LocateType), err)
		return false
	}
	return true
}

// says is a question printed once, with nothing to count down.
func (p *Prompter) says(question string) func() func() {
	return func() func() {
		fmt.Fprint(p.Err, safetext.Terminal(question))
		return func() {}
	}
}

// yes asks (ask shows the question and returns what stops its countdown)
// until it gets a yes or a no: y or yes is a yes; n, no or an empty line
// (the N the question shows) is a no, as is no answer in time.
func (p *Prompter) yes(cmd, q context.Context, ask func() func()) bool {
	line, ok := p.understood(cmd, q, ask, yesNo, "y or n")
	return ok && (line == "y" || line == "yes")
}

// yesNo reports whether line is a yes or a no.
func yesNo(line string) bool {
	switch line {
	case "y", "yes", "n", "no", "":
		return true
	}
	return false
}

// understood asks until an answer line is one valid says it can take,
// within q's time; a typo is said and the question asked again, never
// taken for a no (which declines the offer at once). It is false when no
// answer came.
func (p *Prompter) understood(cmd, q context.Context, ask func() func(), valid func(string) bool, want string) (string, bool) {
	for {
		line, ok := p.answerLine(cmd, q, ask())
		if !ok || valid(line) {
			return line, ok
		}
		fmt.Fprintf(p.Err, "%q is not an answer here: type %s\n", line, want)
	}
}

// answerLine waits for the answer line to question q, trimmed and in
// lower case, stopping its countdown before anything else is printed;
// false when none came. A question withdrawn says why; an interrupted
// command (cmd's end) leaves its question to be withdrawn and says
// nothing: the command says "interrupted", once.
func (p *Prompter) answerLine(cmd, q context.Context, stop func()) (string, bool) {
	select {
	case line, ok := <-p.Lines():
		stop()
		return strings.TrimSpace(strings.ToLower(line)), ok
	case <-q.Done():
		stop()
		if errors.Is(context.Cause(q), account.ErrAnsweredElsewhere) {
			fmt.Fprintln(p.Err, "\nanswered elsewhere")
		} else {
			fmt.Fprintln(p.Err, "\nno answer in time")
		}
		return "", false
	case <-cmd.Done():
		stop()
		fmt.Fprintln(p.Err)
		<-q.Done() // withdrawn by the command's withdrawal, or its window
		return "", false
	}
}

// Lines reads r's lines for the prompts: the reader starts on the first
// call of the function returned, and every call gets its one channel,
// closed at r's end (nil r has no lines).
func Lines(r io.Reader) func() <-chan string {
	var once sync.Once
	lines := make(chan string)
	return func() <-chan string {
		once.Do(func() {
			if r == nil {
				close(lines)
				return
			}
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(r)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
		})
		return lines
	}
}
