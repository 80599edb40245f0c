// A small consumer over the official Pulsar Go client (github.com/apache/pulsar-client-go,
// unmodified, pinned by go.mod and go.sum) for `permitcheck conform`, on its public API only:
// it subscribes Shared with receiver queue Q, processes each message (sleeps DELAY_MS), then
// acknowledges it, or negatively acknowledges every NACK_EVERY-th one (0: never).
//
//	permitcheck-go-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY]
//
// PERMITCHECK_GO_MODE=zero-queue asks for the client's zero-queue consumer
// (ConsumerOptions.EnableZeroQueueConsumer, releases v0.13.0 and newer; Q is then ignored). The
// option is set by name through reflection, so the same program builds against older releases,
// which refuse the mode at start (exit 2).
//
// Logs to stderr. Exit 0 on SIGTERM, 2 on bad arguments, 1 when the library fails to
// subscribe (permitcheck reports that as a client failure).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

const nackRedeliveryDelay = 100 * time.Millisecond

func usage() {
	fmt.Fprintln(os.Stderr, "usage: permitcheck-go-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY]")
	os.Exit(2)
}

func intArg(args []string, i int, def int) int {
	if len(args) <= i {
		return def
	}
	n, err := strconv.Atoi(args[i])
	if err != nil || n < 0 {
		usage()
	}
	return n
}

func main() {
	args := os.Args[1:]
	if len(args) < 4 || !strings.HasPrefix(args[0], "pulsar://") {
		usage()
	}
	url, topic, subscription := args[0], args[1], args[2]
	q := intArg(args, 3, 0)
	delayMs := intArg(args, 4, 0)
	nackEvery := intArg(args, 5, 0)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0) // at once: closing the client could wait on the broker
	}()

	options := pulsar.ConsumerOptions{
		Topic:               topic,
		SubscriptionName:    subscription,
		Type:                pulsar.Shared,
		ReceiverQueueSize:   q,
		NackRedeliveryDelay: nackRedeliveryDelay,
	}
	switch mode := os.Getenv("PERMITCHECK_GO_MODE"); mode {
	case "":
	case "zero-queue":
		field := reflect.ValueOf(&options).Elem().FieldByName("EnableZeroQueueConsumer")
		if !field.IsValid() || field.Kind() != reflect.Bool {
			fmt.Fprintln(os.Stderr, "permitcheck-go-consumer: PERMITCHECK_GO_MODE=zero-queue: this release has no EnableZeroQueueConsumer")
			os.Exit(2)
		}
		field.SetBool(true)
	default:
		fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: PERMITCHECK_GO_MODE=%q: want zero-queue or nothing\n", mode)
		os.Exit(2)
	}
	client, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               url,
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 5 * time.Second,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: client: %v\n", err)
		os.Exit(1)
	}
	consumer, err := client.Subscribe(options)
	if err != nil {
		fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: subscribe: %v\n", err)
		os.Exit(1)
	}
	received := 0
	for {
		msg, err := consumer.Receive(context.Background())
		if err != nil {
			fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: receive: %v\n", err)
			os.Exit(1)
		}
		received++
		if delayMs > 0 {
			time.Sleep(time.Duration(delayMs) * time.Millisecond)
		}
		if nackEvery > 0 && received%nackEvery == 0 {
			consumer.Nack(msg)
		} else if err := consumer.Ack(msg); err != nil {
			fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: ack: %v\n", err)
		}
	}
}
