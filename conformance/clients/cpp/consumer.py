#!/usr/bin/env python3
"""A small consumer over the official Pulsar C++ client (PyPI pulsar-client, which bundles
libpulsar) for `permitcheck conform`, on the client's public API only: it subscribes Shared
with receiver queue Q, processes each message (sleeps DELAY_MS), then acknowledges it, or
negatively acknowledges every NACK_EVERY-th one (0: never).

    consumer.py URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY]

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

    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    log = logging.getLogger("pulsar")
    # SIGTERM ends the process at once with 0: closing the client could wait on the broker.
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))

    client = pulsar.Client(url, operation_timeout_seconds=10, logger=log)
    consumer = client.subscribe(
        topic, subscription,
        consumer_type=pulsar.ConsumerType.Shared,
        receiver_queue_size=q,
        negative_ack_redelivery_delay_ms=NACK_REDELIVERY_DELAY_MS)
    received = 0
    while True:
        try:
            msg = consumer.receive(timeout_millis=200)
        except pulsar.Timeout:
            continue
        received += 1
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        if nack_every and received % nack_every == 0:
            consumer.negative_acknowledge(msg)
        else:
            consumer.acknowledge(msg)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
