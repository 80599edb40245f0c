#!/usr/bin/env node
// A small pulsar-flex consumer for `permitcheck conform`: it subscribes, consumes every
// message it is given and acknowledges it (or negatively acknowledges every n-th one), using
// pulsar-flex's public API only. The library itself is unmodified (package-lock.json pins it).
//
//   node consumer.js URL TOPIC SUBSCRIPTION QUEUE_SIZE [DELAY_MS] [NACK_EVERY]
//   node consumer.js pulsar://127.0.0.1:6650 persistent://public/default/t sub 10 0 0
//
// Exit 0 on SIGTERM; 2 on bad arguments. Anything else (an exception in the library) ends the
// process with Node's own non-zero status: permitcheck reports that as a client crash.
'use strict';

const { Consumer, logLevel } = require('pulsar-flex');

const [url, topic, subscription, queueSize, delayMs = '0', nackEvery = '0'] = process.argv.slice(2);
const match = /^pulsar:\/\/([^/]+)\/?$/.exec(url || '');
if (!match || !topic || !subscription || !(Number(queueSize) >= 1)) {
  console.error('usage: consumer.js URL TOPIC SUBSCRIPTION QUEUE_SIZE [DELAY_MS] [NACK_EVERY]');
  process.exit(2);
}

const consumer = new Consumer({
  discoveryServers: [match[1]],
  topic,
  subscription,
  subType: Consumer.SUB_TYPES.EXCLUSIVE,
  consumerName: 'permitcheck-conform',
  receiveQueueSize: Number(queueSize),
  reconnectInterval: 200,
  logLevel: process.env.PULSAR_FLEX_LOG ? logLevel.DEBUG : logLevel.ERROR,
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let received = 0;

const main = async () => {
  await consumer.subscribe();
  await consumer.run({
    autoAck: false,
    onMessage: async ({ ack }) => {
      received += 1;
      if (Number(delayMs) > 0) await sleep(Number(delayMs));
      if (Number(nackEvery) > 0 && received % Number(nackEvery) === 0) {
        await ack({ type: Consumer.ACK_TYPES.NEGATIVE });
      } else {
        await ack();
      }
    },
  });
};

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
main().catch((e) => {
  console.error(`consumer.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
