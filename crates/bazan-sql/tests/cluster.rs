//! The gRPC coordinator (feature `grpc`): a worker of another version is refused with a
//! message naming both versions and the worker; a list of workers none of which answers is
//! an error naming them; worker addresses are checked.

use std::time::Duration;

use bazan_sql::SqlSession;
use bazan_sql::cluster::{Cluster, PROTOCOL_VERSION};

use crate::common::mapped_copy;

/// Serves a datafusion-distributed worker reporting `version` on a free loopback port, on a
/// runtime of its own that stops when the returned sender drops.
fn foreign_worker(version: &'static str) -> (u16, tokio::sync::oneshot::Sender<()>) {
    let (port_tx, port_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            port_tx
                .send(listener.local_addr().expect("addr").port())
                .expect("send port");
            let worker = datafusion_distributed::Worker::default().with_version(version);
            let stop = async move {
                let _ = stop_rx.await;
            };
            let _ = tonic::transport::Server::builder()
                .add_service(worker.into_worker_server())
                .serve_with_incoming_shutdown(
                    tonic::transport::server::TcpIncoming::from(listener),
                    stop,
                )
                .await;
        });
    });
    let port = port_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the worker's port");
    (port, stop_tx)
}

#[test]
fn a_worker_of_another_version_is_refused() {
    let Some((_dir, lake)) = mapped_copy(&|r| r == "alpha.csv") else {
        return;
    };
    let (port, _stop) = foreign_worker("bazan-sql 0.0.1 (an older release)");
    let cluster = Cluster::new(&[format!("127.0.0.1:{port}")]).expect("cluster");
    let s = SqlSession::on_cluster(cluster, 1).expect("session");
    s.register_lake_map("lake", lake).expect("register");
    let err = s
        .sql("select count(*) from lake")
        .expect_err("version skew");
    let text = err.to_string();
    assert!(text.contains("an older release"), "{text}");
    assert!(text.contains(PROTOCOL_VERSION), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
}

#[test]
fn no_answering_worker_is_an_error_naming_them() {
    let Some((_dir, lake)) = mapped_copy(&|r| r == "alpha.csv") else {
        return;
    };
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let cluster = Cluster::new(&[format!("http://127.0.0.1:{port}")]).expect("cluster");
    let s = SqlSession::on_cluster(cluster, 1).expect("session");
    s.register_lake_map("lake", lake).expect("register");
    let started = std::time::Instant::now();
    let err = s.sql("select count(*) from lake").expect_err("no worker");
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = err.to_string();
    assert!(text.contains("no worker answered"), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
}

#[test]
fn worker_addresses_are_checked() {
    for bad in ["", "ftp://h:1", "http://", "no port here:"] {
        assert!(Cluster::new(&[bad]).is_err(), "{bad:?}");
    }
    let empty: [&str; 0] = [];
    assert!(Cluster::new(&empty).is_err());
    let c = Cluster::new(&["127.0.0.1:7000", "http://[::1]:7001"]).expect("good addresses");
    assert_eq!(c.urls().len(), 2);
}
