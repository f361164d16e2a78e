//! `haul demo`: a verified loopback transfer, the quickest way to see haul work.

use crate::sys::cpu_seconds;
use crate::units;
use anyhow::{bail, Context, Result};
use clap::Args;
use haul_net::{Endpoint, NetConfig, Offloads, Stats};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct DemoArgs {
    /// Bytes to transfer (K, M, G, T suffixes are powers of 1024).
    #[arg(long, default_value = "1G", value_parser = units::parse_size)]
    bytes: u64,
    /// Send one datagram per system call (disable UDP GSO/GRO), to compare.
    #[arg(long)]
    no_offload: bool,
    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Print a statistics line every second.
    #[arg(long, short)]
    verbose: bool,
}

/// Deterministic data, so the receiver could regenerate it; the demo compares hashes.
fn fill(buf: &mut [u8], offset: u64) {
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        let x = (offset / 8 + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
}

pub fn run(args: DemoArgs) -> Result<ExitCode> {
    let offloads = Offloads {
        gso: !args.no_offload,
        gro: !args.no_offload,
    };
    let server_cfg = NetConfig {
        offloads,
        ..NetConfig::listener()
    };
    let client_cfg = NetConfig {
        offloads,
        ..NetConfig::default()
    };
    let loopback = "127.0.0.1:0".parse().expect("literal address");
    let server =
        Endpoint::bind(loopback, server_cfg).context("binding the demo server on 127.0.0.1")?;
    let client =
        Endpoint::bind(loopback, client_cfg).context("binding the demo client on 127.0.0.1")?;
    let total = args.bytes;
    let sent = Arc::new(AtomicU64::new(0));
    let cpu_start = cpu_seconds();
    let started = Instant::now();

    let mut out = client
        .connect(server.local_addr())
        .context("connecting to the demo server")?;
    let sent_by_writer = Arc::clone(&sent);
    let writer = thread::spawn(move || -> Result<(blake3::Hash, Stats)> {
        let mut hasher = blake3::Hasher::new();
        let mut chunk = vec![0u8; 1 << 20];
        let mut offset = 0u64;
        while offset < total {
            let n = chunk.len().min((total - offset) as usize);
            fill(&mut chunk[..n], offset);
            hasher.update(&chunk[..n]);
            out.write_all(&chunk[..n]).context("sending")?;
            offset += n as u64;
            sent_by_writer.store(offset, Ordering::Relaxed);
        }
        out.finish().context("closing the sending side")?;
        Ok((hasher.finalize(), out.stats()))
    });

    let mut incoming = server.accept().context("accepting the demo connection")?;
    incoming.set_read_timeout(Some(Duration::from_secs(15)));
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 4 << 20];
    let mut received = 0u64;
    let progress = std::io::stderr().is_terminal() || args.verbose;
    let mut next_report = Instant::now() + Duration::from_secs(1);
    let mut last = (Instant::now(), 0u64);
    loop {
        let n = incoming.read(&mut buf).context("receiving")?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        received += n as u64;
        if progress && Instant::now() >= next_report {
            let now = Instant::now();
            let rate = (received - last.1) as f64 * 8.0 / (now - last.0).as_secs_f64();
            let s = incoming.stats();
            eprintln!(
                "{:>6.1}s {:>10} of {:>10} {:>13}  rtt {:>7.2?}  lost {:>6}  window {:>6}",
                (now - started).as_secs_f64(),
                units::bytes(received),
                units::bytes(total),
                units::rate(rate),
                s.rtt,
                s.packets_lost,
                s.flow_window,
            );
            last = (now, received);
            next_report = now + Duration::from_secs(1);
        }
    }
    let elapsed = started.elapsed();
    let (sent_hash, sender_stats) = writer.join().expect("writer thread")?;
    let cpu = cpu_seconds() - cpu_start;
    let received_hash = hasher.finalize();
    let verified = received == total && received_hash == sent_hash;
    let throughput = received as f64 * 8.0 / elapsed.as_secs_f64();
    if args.json {
        let summary = serde_json::json!({
            "bytes": received,
            "seconds": elapsed.as_secs_f64(),
            "bits_per_second": throughput,
            "cpu_seconds": cpu,
            "verified": verified,
            "blake3": received_hash.to_hex().to_string(),
            "gso": client.offloads().gso,
            "gro": server.offloads().gro,
            "packets_sent": sender_stats.packets_sent,
            "packets_retransmitted": sender_stats.packets_retransmitted,
            "rtt_us": sender_stats.rtt.as_micros() as u64,
        });
        println!("{summary}");
    } else {
        println!(
            "haul demo: {} over loopback in {:.2} s = {} ({:.2} s CPU; GSO {}, GRO {})",
            units::bytes(received),
            elapsed.as_secs_f64(),
            units::rate(throughput),
            cpu,
            on_off(client.offloads().gso),
            on_off(server.offloads().gro),
        );
        println!(
            "  sent {} packets, retransmitted {}, RTT {:?}",
            sender_stats.packets_sent, sender_stats.packets_retransmitted, sender_stats.rtt
        );
        println!(
            "  BLAKE3 {} {}",
            received_hash.to_hex(),
            if verified {
                "verified: identical to what was sent"
            } else {
                "MISMATCH"
            }
        );
    }
    if !verified {
        bail!("received data differs from what was sent ({received} of {total} bytes)");
    }
    Ok(ExitCode::SUCCESS)
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}
