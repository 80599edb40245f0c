//! A small consumer over the Rust Pulsar client `pulsar` (crates.io 6.9.1, unmodified, pinned by
//! Cargo.toml and Cargo.lock) for `permitcheck conform`, on its public API only: it subscribes
//! SUB_TYPE (Exclusive, Failover, Shared or Key_Shared; default Shared, as `permitcheck
//! real-broker` passes it) with receiver queue Q and batch size Q (the window of its Flows),
//! processes each message (sleeps DELAY_MS), then acknowledges it, or negatively acknowledges
//! every NACK_EVERY-th one (0: never). PERMITCHECK_REOPEN_AFTER=N closes the consumer after its
//! N-th message and subscribes again on the same client (its pooled connection), once.
//! PERMITCHECK_BATCH_INDEX_ACK is not taken: the crate has no batch-index acknowledgement.
//!
//!     permitcheck-rust-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY] [SUB_TYPE]
//!
//! A per-message error the client's stream yields (a payload it could not decode) is logged
//! and consuming goes on, as an application would; the stream's end, or failing to connect or
//! subscribe, exits 1. Logs to stderr (the client's own log lines at info and above;
//! PERMITCHECK_RUST_LOG=debug|trace for more). Exit 0 on SIGTERM or SIGINT, 2 on bad arguments.
use std::time::Duration;

use futures::StreamExt;
use pulsar::{Consumer, ConsumerOptions, Pulsar, SubType, TokioExecutor};

struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::max_level()
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }
    }
    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

fn usage() -> ! {
    eprintln!(
        "usage: permitcheck-rust-consumer URL TOPIC SUBSCRIPTION Q [DELAY_MS] [NACK_EVERY] [SUB_TYPE]"
    );
    std::process::exit(2);
}

fn int_arg(args: &[String], i: usize, default: u64) -> u64 {
    match args.get(i) {
        None => default,
        Some(s) => s.parse::<u64>().unwrap_or_else(|_| usage()),
    }
}

fn fail(what: &str, err: impl std::fmt::Display) -> ! {
    eprintln!("permitcheck-rust-consumer: {what}: {err}");
    std::process::exit(1);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 || !args[0].starts_with("pulsar://") {
        usage();
    }
    let (url, topic, subscription) = (args[0].clone(), args[1].clone(), args[2].clone());
    let q = int_arg(&args, 3, 0);
    let delay_ms = int_arg(&args, 4, 0);
    let nack_every = int_arg(&args, 5, 0);
    if q == 0 || q > u64::from(u32::MAX) {
        usage(); // the client maps a receiver queue of 0 to 1000 (consumer/options.rs:85)
    }
    let sub_type = match args.get(6).map(String::as_str) {
        None | Some("Shared") => SubType::Shared,
        Some("Exclusive") => SubType::Exclusive,
        Some("Failover") => SubType::Failover,
        Some("Key_Shared") => SubType::KeyShared,
        Some(other) => {
            eprintln!(
                "permitcheck-rust-consumer: SUB_TYPE {other:?}: want Exclusive, Failover, Shared or Key_Shared"
            );
            std::process::exit(2);
        }
    };
    let reopen_after: u64 = match std::env::var("PERMITCHECK_REOPEN_AFTER") {
        Err(_) => 0,
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("permitcheck-rust-consumer: PERMITCHECK_REOPEN_AFTER={v:?}: want a count");
            std::process::exit(2);
        }),
    };
    let level = match std::env::var("PERMITCHECK_RUST_LOG").as_deref() {
        Ok("trace") => log::LevelFilter::Trace,
        Ok("debug") => log::LevelFilter::Debug,
        _ => log::LevelFilter::Info,
    };
    let _ = log::set_logger(&LOGGER).map(|()| log::set_max_level(level));

    // At once on SIGTERM: closing the client could wait on the broker.
    tokio::spawn(async {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
        else {
            fail("signals", "cannot install the SIGTERM handler");
        };
        tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        std::process::exit(0);
    });

    let pulsar: Pulsar<TokioExecutor> = Pulsar::builder(url, TokioExecutor)
        .build()
        .await
        .unwrap_or_else(|e| fail("client", e));
    let subscribe = || async {
        let consumer: Consumer<Vec<u8>, TokioExecutor> = pulsar
            .consumer()
            .with_topic(topic.clone())
            .with_subscription(subscription.clone())
            .with_subscription_type(sub_type)
            .with_batch_size(q as u32)
            .with_options(ConsumerOptions::default().with_receiver_queue_size(q as u32))
            .build()
            .await
            .unwrap_or_else(|e| fail("subscribe", e));
        consumer
    };
    let mut consumer = subscribe().await;

    let mut received: u64 = 0;
    while let Some(item) = consumer.next().await {
        let msg = match item {
            Ok(msg) => msg,
            Err(e) => {
                eprintln!("permitcheck-rust-consumer: receive: {e}");
                continue;
            }
        };
        received += 1;
        if delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        let res = if nack_every > 0 && received % nack_every == 0 {
            consumer.nack(&msg).await
        } else {
            consumer.ack(&msg).await
        };
        if let Err(e) = res {
            eprintln!("permitcheck-rust-consumer: ack: {e}");
        }
        if reopen_after > 0 && received == reopen_after {
            // Close and subscribe again on the same client: the new consumer uses the pooled
            // connection (the same broker address).
            if let Err(e) = consumer.close().await {
                eprintln!("permitcheck-rust-consumer: close: {e}");
            }
            consumer = subscribe().await;
        }
    }
    fail("receive", "the consumer's stream ended");
}
