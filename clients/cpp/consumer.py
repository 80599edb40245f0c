#!/usr/bin/env python3
"""A small consumer over the official Pulsar C++ client (PyPI pulsar-client, which bundles
libpulsar) for `permitcheck conform`, on the client's public API only: it subscribes Shared
with receiver queue Q, processes each message (sleeps DELAY_MS), then acknowledges it, or
negatively acknowledges every NACK_EVERY-th one (0: never).

    consumer.py URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY]

PERMITCHECK_CPP_MODE selects how the application takes its messages (the bug catalogue's rows
need the other two; docs/bug-catalogue.md):
  receive     (default) receive(timeout_millis=200) in a loop, receiver queue Q;
  zero-queue  a zero-queue consumer: receiver queue 0 and a blocking receive() (the wrapper's
              receiveAsync); it asks for one message at a time, so Q must be 1 (it is judged
              as Q = 1, T = 1);
  listener    a message listener (processes and acknowledges in the callback), receiver
              queue Q; the main thread only waits;
  zero-queue-listener
              a message listener on a zero-queue consumer (receiver queue 0; Q must be 1,
              judged as Q = 1, T = 1).

Logs to stderr. Exit 0 on SIGTERM, 2 on bad arguments; an exception from the library ends it
with status 1, which permitcheck reports as a client failure.
"""
import logging
import os
import signal
import sys
import time

import pulsar

NACK_REDELIVERY_DELAY_MS = 100
MODES = ("receive", "zero-queue", "listener", "zero-queue-listener")
SUB_TYPES = ("Exclusive", "Failover", "Shared", "Key_Shared")


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    url, topic, subscription = argv[0], argv[1], argv[2]
    try:
        q = int(argv[3])
        delay_ms = int(argv[4]) if len(argv) > 4 else 0
        nack_every = int(argv[5]) if len(argv) > 5 else 0
    except ValueError:
        print("consumer.py: Q, DELAY_MS and NACK_EVERY are integers", file=sys.stderr)
        return 2
    if not url.startswith("pulsar://") or q < 0 or delay_ms < 0 or nack_every < 0:
        print("consumer.py: bad arguments", file=sys.stderr)
        return 2
    sub_type = argv[6] if len(argv) > 6 else "Shared"
    if sub_type not in SUB_TYPES:
        print("consumer.py: SUB_TYPE is one of " + ", ".join(SUB_TYPES), file=sys.stderr)
        return 2
    batch_index_ack = os.environ.get("PERMITCHECK_BATCH_INDEX_ACK", "") or "0"
    reopen_after = os.environ.get("PERMITCHECK_REOPEN_AFTER", "") or "0"
    if batch_index_ack not in ("0", "1") or not reopen_after.isdigit():
        print("consumer.py: PERMITCHECK_BATCH_INDEX_ACK is 0 or 1, PERMITCHECK_REOPEN_AFTER a "
              "count", file=sys.stderr)
        return 2
    reopen_after = int(reopen_after)
    mode = os.environ.get("PERMITCHECK_CPP_MODE", "") or "receive"
    if mode not in MODES:
        print("consumer.py: PERMITCHECK_CPP_MODE is one of " + ", ".join(MODES), file=sys.stderr)
        return 2
    zero_queue = mode in ("zero-queue", "zero-queue-listener")
    listener = mode in ("listener", "zero-queue-listener")
    if zero_queue and q != 1:
        print("consumer.py: the zero-queue mode holds one permit at a time: Q must be 1",
              file=sys.stderr)
        return 2

    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    log = logging.getLogger("pulsar")
    # SIGTERM ends the process at once with 0: closing the client could wait on the broker.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))

    client = pulsar.Client(url, operation_timeout_seconds=10, logger=log)
    handled = [0]

    def handle(consumer, msg):
        handled[0] += 1
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        if nack_every and handled[0] % nack_every == 0:
            consumer.negative_acknowledge(msg)
        else:
            consumer.acknowledge(msg)

    options = dict(consumer_type=getattr(pulsar.ConsumerType, sub_type.replace("_", "")),
                   receiver_queue_size=0 if zero_queue else q,
                   negative_ack_redelivery_delay_ms=NACK_REDELIVERY_DELAY_MS)
    if batch_index_ack == "1":
        options["batch_index_ack_enabled"] = True
    if listener:
        options["message_listener"] = handle
    consumer = client.subscribe(topic, subscription, **options)
    log.info("consumer.py: subscribed, mode %s", mode)
    if listener:
        while True:
            time.sleep(1)
    while True:
        if mode == "zero-queue":
            # A zero-queue consumer cannot receive with a timeout; the wrapper's receive()
            # without one waits in receiveAsync and still lets SIGTERM through.
            msg = consumer.receive()
        else:
            try:
                msg = consumer.receive(timeout_millis=200)
            except pulsar.Timeout:
                continue
        handle(consumer, msg)
        if reopen_after and handled[0] == reopen_after:
            # Close and subscribe again on the same client: the new consumer reuses the
            # client's pooled connection to the broker.
            consumer.close()
            log.info("consumer.py: closed after %d messages, subscribing again", handled[0])
            consumer = client.subscribe(topic, subscription, **options)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
