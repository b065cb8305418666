module github.com/locatorhq/locator

go 1.26.0

require (
	github.com/looplab/fsm v1.0.3
	github.com/shopspring/decimal v1.6.0
	github.com/spf13/pflag v1.1.0
	golang.org/x/time v0.16.0
)
