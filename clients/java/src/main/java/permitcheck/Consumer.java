// A small consumer over Apache's official Java client for `permitcheck conform`: it subscribes
// with receiver queue Q (Shared unless SUB_TYPE says otherwise), processes each message (sleeps
// DELAY_MS), acknowledges it, and negatively acknowledges every NACK_EVERY-th one instead (0:
// never). Public API only; the library is unmodified from Maven Central (pom.xml pins it).
//
//   java -jar target/consumer.jar URL TOPIC SUBSCRIPTION Q DELAY_MS NACK_EVERY [SUB_TYPE]
//
// SUB_TYPE is Exclusive, Failover, Shared (the default) or Key_Shared. Two environment
// variables, unset by default (`permitcheck conform` sets neither), serve `permitcheck
// real-broker`: PERMITCHECK_BATCH_INDEX_ACK=1 turns on the client's batch-index
// acknowledgement (ConsumerBuilder.enableBatchIndexAcknowledgment); PERMITCHECK_REOPEN_AFTER=N
// closes the consumer once it has handled N messages and subscribes again on the same client,
// so on the same pooled connection.
//
// Exit 0 on SIGTERM (a shutdown hook closes the client); 2 on bad arguments; 1 when the
// library fails. Logs go to stderr.
package permitcheck;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.SubscriptionType;

public final class Consumer {
  private static volatile boolean stopping = false;

  private static void log(String line) {
    System.err.println("permitcheck-java: " + line);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6 && args.length != 7) {
      log("usage: Consumer URL TOPIC SUBSCRIPTION Q DELAY_MS NACK_EVERY [SUB_TYPE]");
      System.exit(2);
    }
    final int q;
    final long delayMs;
    final long nackEvery;
    try {
      q = Integer.parseInt(args[3]);
      delayMs = Long.parseLong(args[4]);
      nackEvery = Long.parseLong(args[5]);
    } catch (NumberFormatException e) {
      log("Q, DELAY_MS and NACK_EVERY must be integers: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (q < 1 || delayMs < 0 || nackEvery < 0) {
      log("need Q >= 1, DELAY_MS >= 0, NACK_EVERY >= 0");
      System.exit(2);
    }
    SubscriptionType subType = SubscriptionType.Shared;
    if (args.length == 7) {
      try {
        subType = SubscriptionType.valueOf(args[6]);
      } catch (IllegalArgumentException e) {
        log("SUB_TYPE is Exclusive, Failover, Shared or Key_Shared, not " + args[6]);
        System.exit(2);
      }
    }
    final String batchIndexAck = System.getenv().getOrDefault("PERMITCHECK_BATCH_INDEX_ACK", "");
    final String reopenText = System.getenv().getOrDefault("PERMITCHECK_REOPEN_AFTER", "");
    long reopenAfter = 0;
    try {
      reopenAfter = reopenText.isEmpty() ? 0 : Long.parseLong(reopenText);
    } catch (NumberFormatException e) {
      reopenAfter = -1;
    }
    if (!batchIndexAck.matches("|0|1") || reopenAfter < 0) {
      log("PERMITCHECK_BATCH_INDEX_ACK is 0 or 1, PERMITCHECK_REOPEN_AFTER a count");
      System.exit(2);
    }

    PulsarClient client = PulsarClient.builder().serviceUrl(args[0]).build();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stopping = true;
      try {
        client.close();
      } catch (PulsarClientException e) {
        log("close: " + e.getMessage());
      }
      Runtime.getRuntime().halt(0);  // a SIGTERM is the normal end: exit 0, not 143
    }));

    ConsumerBuilder<byte[]> builder = client.newConsumer()
        .topic(args[1])
        .subscriptionName(args[2])
        .subscriptionType(subType)
        .receiverQueueSize(q)
        .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS);
    if (batchIndexAck.equals("1")) {
      builder.enableBatchIndexAcknowledgment(true);
    }
    org.apache.pulsar.client.api.Consumer<byte[]> consumer = builder.subscribe();
    log("subscribed " + args[1] + " " + subType + " q=" + q + " delay_ms=" + delayMs
        + " nack_every=" + nackEvery);

    long received = 0;
    while (true) {
      Message<byte[]> message;
      try {
        message = consumer.receive();
      } catch (PulsarClientException e) {
        if (stopping) {
          return;  // closed by the shutdown hook, which ends the process with 0
        }
        throw e;
      }
      received++;
      if (delayMs > 0) {
        try {
          Thread.sleep(delayMs);
        } catch (InterruptedException e) {
          return;  // interrupted only while shutting down
        }
      }
      if (nackEvery > 0 && received % nackEvery == 0) {
        log("nack " + message.getMessageId());
        consumer.negativeAcknowledge(message);
      } else {
        consumer.acknowledge(message);
      }
      if (reopenAfter > 0 && received == reopenAfter) {
        // Close and subscribe again on the same client: the new consumer reuses the client's
        // pooled connection to the broker.
        consumer.close();
        log("closed after " + received + " messages, subscribing again");
        consumer = builder.subscribe();
      }
    }
  }
}
