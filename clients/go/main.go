// A small consumer over the official Pulsar Go client (github.com/apache/pulsar-client-go,
// unmodified, pinned by go.mod and go.sum) for `permitcheck conform`, on its public API only:
// it subscribes with receiver queue Q (Shared unless SUB_TYPE says otherwise), processes each
// message (sleeps DELAY_MS), then acknowledges it, or negatively acknowledges every
// NACK_EVERY-th one (0: never).
//
//	permitcheck-go-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY] [SUB_TYPE]
//
// SUB_TYPE is Exclusive, Failover, Shared (the default) or Key_Shared. Two environment
// variables, unset by default (`permitcheck conform` sets neither), serve `permitcheck
// real-broker`: PERMITCHECK_BATCH_INDEX_ACK=1 turns on the client's batch-index
// acknowledgement (ConsumerOptions.EnableBatchIndexAcknowledgment, set by name through
// reflection like the zero-queue mode); PERMITCHECK_REOPEN_AFTER=N closes the consumer once it
// has handled N messages and subscribes again on the same client, so on the same pooled
// connection.
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
	fmt.Fprintln(os.Stderr, "usage: permitcheck-go-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY] [SUB_TYPE]")
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
	subType := pulsar.Shared
	if len(args) > 6 {
		types := map[string]pulsar.SubscriptionType{"Exclusive": pulsar.Exclusive,
			"Failover": pulsar.Failover, "Shared": pulsar.Shared, "Key_Shared": pulsar.KeyShared}
		t, ok := types[args[6]]
		if !ok {
			fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: SUB_TYPE %q: want Exclusive, Failover, Shared or Key_Shared\n", args[6])
			os.Exit(2)
		}
		subType = t
	}
	reopenAfter := 0
	if v := os.Getenv("PERMITCHECK_REOPEN_AFTER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: PERMITCHECK_REOPEN_AFTER=%q: want a count\n", v)
			os.Exit(2)
		}
		reopenAfter = n
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0) // at once: closing the client could wait on the broker
	}()

	options := pulsar.ConsumerOptions{
		Topic:               topic,
		SubscriptionName:    subscription,
		Type:                subType,
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
	switch v := os.Getenv("PERMITCHECK_BATCH_INDEX_ACK"); v {
	case "", "0":
	case "1":
		field := reflect.ValueOf(&options).Elem().FieldByName("EnableBatchIndexAcknowledgment")
		if !field.IsValid() || field.Kind() != reflect.Bool {
			fmt.Fprintln(os.Stderr, "permitcheck-go-consumer: PERMITCHECK_BATCH_INDEX_ACK=1: this release has no EnableBatchIndexAcknowledgment")
			os.Exit(2)
		}
		field.SetBool(true)
	default:
		fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: PERMITCHECK_BATCH_INDEX_ACK=%q: want 1, 0 or nothing\n", v)
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
		if reopenAfter > 0 && received == reopenAfter {
			// Close and subscribe again on the same client: the new consumer reuses the
			// client's pooled connection to the broker.
			consumer.Close()
			fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: closed after %d messages, subscribing again\n", received)
			if consumer, err = client.Subscribe(options); err != nil {
				fmt.Fprintf(os.Stderr, "permitcheck-go-consumer: subscribe again: %v\n", err)
				os.Exit(1)
			}
		}
	}
}
