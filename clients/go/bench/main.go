// The consumer of build/bench/tap_client_bench over the official Pulsar Go client
// (github.com/apache/pulsar-client-go, unmodified, pinned by ../go.mod and ../go.sum), on its
// public API only: it subscribes Shared with receiver queue Q and acknowledges every message
// as soon as Receive returns it, each ack sent at once (AckGroupingOptions.MaxSize 1: the
// client's immediate ack tracker, instead of its default grouping of up to 100 ms, which
// would hide the round trip the bench times at the broker).
//
//	permitcheck-go-bench URL TOPIC SUBSCRIPTION Q
//
// Logs to stderr. Exit 0 on SIGTERM, 2 on bad arguments, 1 when the library fails to
// subscribe or receive.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

func main() {
	args := os.Args[1:]
	if len(args) != 4 || !strings.HasPrefix(args[0], "pulsar://") {
		fmt.Fprintln(os.Stderr, "usage: permitcheck-go-bench URL TOPIC SUBSCRIPTION Q")
		os.Exit(2)
	}
	q, err := strconv.Atoi(args[3])
	if err != nil || q < 1 {
		fmt.Fprintln(os.Stderr, "permitcheck-go-bench: Q must be a positive integer")
		os.Exit(2)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0) // at once: closing the client could wait on the broker
	}()
	client, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               args[0],
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 5 * time.Second,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "permitcheck-go-bench: client: %v\n", err)
		os.Exit(1)
	}
	consumer, err := client.Subscribe(pulsar.ConsumerOptions{
		Topic:              args[1],
		SubscriptionName:   args[2],
		Type:               pulsar.Shared,
		ReceiverQueueSize:  q,
		AckGroupingOptions: &pulsar.AckGroupingOptions{MaxSize: 1},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "permitcheck-go-bench: subscribe: %v\n", err)
		os.Exit(1)
	}
	for {
		msg, err := consumer.Receive(context.Background())
		if err != nil {
			fmt.Fprintf(os.Stderr, "permitcheck-go-bench: receive: %v\n", err)
			os.Exit(1)
		}
		if err := consumer.Ack(msg); err != nil {
			fmt.Fprintf(os.Stderr, "permitcheck-go-bench: ack: %v\n", err)
		}
	}
}
