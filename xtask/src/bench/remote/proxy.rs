//! The moto server and the counting, delaying proxy of `cargo xtask bench remote`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A moto S3 server on a free loopback port, stopped (by its process id) when dropped.
pub(super) struct Moto {
    child: Child,
    pub(super) port: u16,
}

impl Moto {
    /// Starts `python3 -m moto.server` (moto[server] 5.2.1, as the tests use it).
    pub(super) fn start() -> anyhow::Result<Moto> {
        let port = free_port()?;
        let child = Command::new("python3")
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start moto (python -m moto.server)")?;
        let moto = Moto { child, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("moto did not listen on 127.0.0.1:{port} within 30 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(moto)
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// What the proxy counted: requests by kind, response bytes, per object the GETs and the
/// bytes their ranges asked for, and a timeline of the requests.
#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    puts: AtomicU64,
    bytes: AtomicU64,
    per_key: Mutex<BTreeMap<String, (u64, u64)>>,
    events: Mutex<Vec<Event>>,
}

/// One moment of the proxy's timeline: when (since the proxy started), on which client
/// connection, what.
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) at: Duration,
    pub(super) conn: u64,
    pub(super) what: String,
    /// A request arrived (else: a response's first bytes or a connection's end).
    pub(super) request: bool,
}

impl Counters {
    fn event(&self, started: Instant, conn: u64, what: String, request: bool) {
        if let Ok(mut v) = self.events.lock() {
            v.push(Event {
                at: started.elapsed(),
                conn,
                what,
                request,
            });
        }
    }
}

/// One reading of the counters: `gets` are object GETs (a listing, `GET /bucket?list-type=2`,
/// counts as a LIST, not a GET), `puts` PUTs and POSTs.
#[derive(Debug, Clone, Default)]
pub(super) struct Traffic {
    pub(super) requests: u64,
    pub(super) gets: u64,
    pub(super) heads: u64,
    pub(super) lists: u64,
    pub(super) puts: u64,
    pub(super) bytes: u64,
    pub(super) per_key: BTreeMap<String, (u64, u64)>,
    /// The requests of the measured call, in order.
    pub(super) events: Vec<Event>,
}

impl Traffic {
    /// The requests other than object GETs, as ` +N HEAD +N LIST …` (empty when none).
    pub(super) fn others(&self) -> String {
        let mut out = String::new();
        for (n, kind) in [
            (self.heads, "HEAD"),
            (self.lists, "LIST"),
            (self.puts, "PUT"),
        ] {
            if n > 0 {
                out.push_str(&format!(" +{n} {kind}"));
            }
        }
        let rest = self.requests - self.gets - self.heads - self.lists - self.puts;
        if rest > 0 {
            out.push_str(&format!(" +{rest} other"));
        }
        out
    }

    /// The timeline of the requests, one line each, times from the first request (the
    /// ends of connections opened before the measured call are left out).
    pub(super) fn timeline(&self) -> Vec<String> {
        let opened: std::collections::BTreeSet<u64> = self
            .events
            .iter()
            .filter(|e| e.request)
            .map(|e| e.conn)
            .collect();
        let mine: Vec<&Event> = self
            .events
            .iter()
            .filter(|e| opened.contains(&e.conn))
            .collect();
        let t0 = mine.first().map_or(Duration::ZERO, |e| e.at);
        mine.into_iter()
            .map(|e| {
                format!(
                    "{:>9.1} ms  conn {:<5} {}",
                    (e.at - t0).as_secs_f64() * 1e3,
                    e.conn,
                    e.what
                )
            })
            .collect()
    }
}

/// The counting, delaying proxy in front of moto.
pub(super) struct Proxy {
    port: u16,
    counters: Arc<Counters>,
    delay_ms: Arc<AtomicU64>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards every connection to `upstream`; object
    /// sizes (`sizes`, by request path) give the bytes of a GET without a range.
    pub(super) fn start(upstream: u16, sizes: BTreeMap<String, u64>) -> anyhow::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let counters = Arc::new(Counters::default());
        let delay_ms = Arc::new(AtomicU64::new(0));
        let sizes = Arc::new(sizes);
        let (c, d) = (counters.clone(), delay_ms.clone());
        let started = Instant::now();
        std::thread::spawn(move || {
            for (conn, client) in listener.incoming().flatten().enumerate() {
                let (c, d, sizes) = (c.clone(), d.clone(), sizes.clone());
                let link = Link {
                    counters: c,
                    delay_ms: d,
                    sizes,
                    started,
                    conn: conn as u64 + 1,
                };
                std::thread::spawn(move || {
                    let _ = connection(client, upstream, &link);
                });
            }
        });
        Ok(Proxy {
            port,
            counters,
            delay_ms,
        })
    }

    pub(super) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(super) fn set_delay(&self, ms: u64) {
        self.delay_ms.store(ms, Relaxed);
    }

    fn read(&self) -> Traffic {
        let c = &self.counters;
        Traffic {
            requests: c.requests.load(Relaxed),
            gets: c.gets.load(Relaxed),
            heads: c.heads.load(Relaxed),
            lists: c.lists.load(Relaxed),
            puts: c.puts.load(Relaxed),
            bytes: c.bytes.load(Relaxed),
            per_key: c.per_key.lock().map(|m| m.clone()).unwrap_or_default(),
            events: Vec::new(),
        }
    }

    fn events_since(&self, n: usize) -> Vec<Event> {
        match self.counters.events.lock() {
            Ok(v) => v.get(n..).map(<[Event]>::to_vec).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }

    fn event_count(&self) -> usize {
        self.counters.events.lock().map_or(0, |v| v.len())
    }

    /// The traffic of `f` (nothing else talks to the proxy meanwhile).
    pub(super) fn measure<T>(
        &self,
        f: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<(T, Traffic)> {
        let before = self.read();
        let first_event = self.event_count();
        let v = f()?;
        let after = self.read();
        let mut per_key = after.per_key.clone();
        for (k, (g, b)) in &before.per_key {
            if let Some(e) = per_key.get_mut(k) {
                e.0 -= g;
                e.1 -= b;
            }
        }
        per_key.retain(|_, e| e.0 > 0);
        Ok((
            v,
            Traffic {
                requests: after.requests - before.requests,
                gets: after.gets - before.gets,
                heads: after.heads - before.heads,
                lists: after.lists - before.lists,
                puts: after.puts - before.puts,
                bytes: after.bytes - before.bytes,
                per_key,
                events: self.events_since(first_event),
            },
        ))
    }
}

/// What a proxied connection shares with the proxy: the counters, the delay, the object
/// sizes, the proxy's start (the timeline's zero) and the connection's number.
struct Link {
    counters: Arc<Counters>,
    delay_ms: Arc<AtomicU64>,
    sizes: Arc<BTreeMap<String, u64>>,
    started: Instant,
    conn: u64,
}

/// One proxied connection: requests one way (counted, delayed), responses the other way
/// (their bytes counted; the first bytes of each read after a request and the end of the
/// connection go into the timeline).
fn connection(client: TcpStream, upstream: u16, link: &Link) -> std::io::Result<()> {
    let server = TcpStream::connect(("127.0.0.1", upstream))?;
    let (mut from_server, mut to_client) = (server.try_clone()?, client.try_clone()?);
    let c = link.counters.clone();
    let (started, conn) = (link.started, link.conn);
    let back = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut total = 0u64;
        loop {
            match from_server.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if total == 0 {
                        let status = String::from_utf8_lossy(&buf[..n.min(64)])
                            .lines()
                            .next()
                            .unwrap_or("")
                            .to_string();
                        c.event(
                            started,
                            conn,
                            format!("first response bytes: {status}"),
                            false,
                        );
                    }
                    total += n as u64;
                    c.bytes.fetch_add(n as u64, Relaxed);
                    if to_client.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        c.event(
            started,
            conn,
            format!("response done, {total} bytes on this connection"),
            false,
        );
        let _ = to_client.shutdown(Shutdown::Write);
    });
    let result = forward_requests(client, &server, link);
    let _ = server.shutdown(Shutdown::Write);
    let _ = back.join();
    result
}

/// Forwards HTTP/1.1 requests from `client` to `server` one at a time: reads each request's
/// head, counts it, sleeps the delay, then forwards the head and its body (by
/// `Content-Length` or chunked).
fn forward_requests(client: TcpStream, mut server: &TcpStream, link: &Link) -> std::io::Result<()> {
    let (counters, delay_ms, sizes) = (&*link.counters, &*link.delay_ms, &*link.sizes);
    let mut r = BufReader::with_capacity(64 * 1024, client);
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = Vec::new();
            if r.read_until(b'\n', &mut line)? == 0 {
                return Ok(());
            }
            let blank = line == b"\r\n" || line == b"\n";
            if blank && head.is_empty() {
                continue;
            }
            head.extend_from_slice(&line);
            if blank {
                break;
            }
        }
        let text = String::from_utf8_lossy(&head).into_owned();
        let mut lines = text.lines();
        let mut first = lines.next().unwrap_or("").split(' ');
        let method = first.next().unwrap_or("").to_string();
        let target = first.next().unwrap_or("").to_string();
        let (mut length, mut chunked, mut range) = (0u64, false, None);
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
                "range" => range = Some(value.to_string()),
                _ => {}
            }
        }
        counters.requests.fetch_add(1, Relaxed);
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        // `GET /bucket?list-type=2&prefix=…` (or any GET of a bucket) is a listing.
        let listing = method == "GET"
            && (query.contains("list-type") || path.trim_matches('/').split('/').count() == 1);
        counters.event(
            link.started,
            link.conn,
            format!(
                "{} {target}{}",
                if listing { "LIST" } else { &method },
                range
                    .as_deref()
                    .map(|r| format!(" [{r}]"))
                    .unwrap_or_default()
            ),
            true,
        );
        let kind = match method.as_str() {
            _ if listing => Some(&counters.lists),
            "HEAD" => Some(&counters.heads),
            "PUT" | "POST" => Some(&counters.puts),
            _ => None,
        };
        if let Some(n) = kind {
            n.fetch_add(1, Relaxed);
        }
        if method == "GET" && !listing {
            counters.gets.fetch_add(1, Relaxed);
            let path = path.to_string();
            if let Some(&size) = sizes.get(&path) {
                let asked = range_len(range.as_deref(), size);
                if let Ok(mut m) = counters.per_key.lock() {
                    let e = m.entry(path).or_default();
                    e.0 += 1;
                    e.1 += asked;
                }
            }
        }
        let delay = delay_ms.load(Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        server.write_all(&head)?;
        if chunked {
            loop {
                let mut size_line = Vec::new();
                r.read_until(b'\n', &mut size_line)?;
                server.write_all(&size_line)?;
                let hex = String::from_utf8_lossy(&size_line);
                let hex = hex.trim().split(';').next().unwrap_or("").to_string();
                let n = u64::from_str_radix(&hex, 16).unwrap_or(0);
                if n == 0 {
                    // Trailers, then the blank line.
                    loop {
                        let mut t = Vec::new();
                        if r.read_until(b'\n', &mut t)? == 0 {
                            break;
                        }
                        server.write_all(&t)?;
                        if t == b"\r\n" || t == b"\n" {
                            break;
                        }
                    }
                    break;
                }
                std::io::copy(&mut (&mut r).take(n + 2), &mut server)?;
            }
        } else if length > 0 {
            std::io::copy(&mut (&mut r).take(length), &mut server)?;
        }
    }
}

/// The bytes a GET with the `Range` header `range` asks of an object of `size` bytes.
fn range_len(range: Option<&str>, size: u64) -> u64 {
    let Some(spec) = range.and_then(|r| r.trim().strip_prefix("bytes=")) else {
        return size;
    };
    let Some((a, b)) = spec.split(',').next().and_then(|s| s.split_once('-')) else {
        return size;
    };
    match (a.trim().parse::<u64>(), b.trim().parse::<u64>()) {
        (Ok(a), Ok(b)) => (b.min(size.saturating_sub(1)) + 1).saturating_sub(a),
        (Ok(a), Err(_)) => size.saturating_sub(a),
        (Err(_), Ok(n)) => n.min(size),
        _ => size,
    }
}

/// A plain HTTP/1.1 request to moto (no proxy): `PUT` with `body` or without; fails unless
/// the answer is 2xx.
pub(super) fn http_put(port: u16, path: &str, body: Option<&Path>) -> anyhow::Result<()> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    let len = match body {
        Some(p) => std::fs::metadata(p)?.len(),
        None => 0,
    };
    write!(
        s,
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/octet-stream\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
    )?;
    if let Some(p) = body {
        std::io::copy(&mut std::fs::File::open(p)?, &mut s)?;
    }
    s.flush()?;
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer)?;
    let code = answer.split(' ').nth(1).unwrap_or("");
    if !code.starts_with('2') {
        bail!("PUT {path} to moto: {}", answer.trim());
    }
    Ok(())
}
