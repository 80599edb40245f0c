// The consumer of src/main/java for pulsar-client releases before 2.4, which have no negative
// acknowledgement (ci/install-java-client.sh builds it for them, -Dconsumer.src): it subscribes
// Shared with receiver queue Q, processes each message (sleeps DELAY_MS) and acknowledges it;
// NACK_EVERY must be 0. Public API only; the library is unmodified from Maven Central.
//
//   java -jar target/consumer.jar URL TOPIC SUBSCRIPTION Q DELAY_MS NACK_EVERY
//
// Exit 0 on SIGTERM (a shutdown hook closes the client); 2 on bad arguments; 1 when the
// library fails. Logs go to stderr.
package permitcheck;

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
    if (args.length != 6) {
      log("usage: Consumer URL TOPIC SUBSCRIPTION Q DELAY_MS NACK_EVERY");
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
    if (q < 1 || delayMs < 0 || nackEvery != 0) {
      log("need Q >= 1, DELAY_MS >= 0, NACK_EVERY = 0 (this release has no negative acks)");
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

    org.apache.pulsar.client.api.Consumer<byte[]> consumer = client.newConsumer()
        .topic(args[1])
        .subscriptionName(args[2])
        .subscriptionType(SubscriptionType.Shared)
        .receiverQueueSize(q)
        .subscribe();
    log("subscribed " + args[1] + " q=" + q + " delay_ms=" + delayMs + " nack_every=" + nackEvery);

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
      consumer.acknowledge(message);
    }
  }
}
