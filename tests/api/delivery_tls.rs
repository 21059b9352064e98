//! Webhooks over HTTPS, the way production sends them: a TLS handshake with the receiver,
//! its certificate checked against the public roots and the operator's CA
//! (`CANON_EXTRA_CA_FILE`), the signed body inside. The receiver is a real TLS server (rustls
//! on a thread of its own) with certificates made by `openssl` for this test.

use crate::delivery::{now, settled_log, spawn_delivering_app, wait_for, Received};
use crate::helpers::{json, TestApp};
use rustls::pki_types::PrivateKeyDer;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A CA and a certificate it signed for 127.0.0.1, as PEM files in `dir`: (CA, chain, key).
fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let output = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl runs");
        assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    run(&[
        &["req", "-x509"][..],
        &ec,
        &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=canon test CA"],
        &["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
    ]
    .concat());
    run(&[&["req"][..], &ec, &["-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"]].concat());
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
    ]);
    (dir.join("ca.pem"), dir.join("leaf.pem"), dir.join("leaf.key"))
}

/// What the TLS receiver saw: each request's `svc-signature` and body, and the handshakes
/// that failed; and the CA that signed its certificate (in a folder kept while it lives).
struct TlsReceiver {
    url: String,
    received: Received,
    failed_handshakes: Arc<AtomicUsize>,
    ca: PathBuf,
    _certificates: tempfile::TempDir,
}

/// An HTTPS receiver on 127.0.0.1 presenting a certificate of a CA made for it (answers 200
/// and closes).
fn tls_receiver() -> TlsReceiver {
    let folder = tempfile::tempdir().unwrap();
    let (ca, chain, key) = certificates(folder.path());
    let chain = canon::egress::roots::extra(Some(&chain)).unwrap();
    let key: PrivateKeyDer<'static> =
        rustls_pemfile::private_key(&mut std::fs::read(key).unwrap().as_slice()).unwrap().unwrap();
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("https://{}/hook", listener.local_addr().unwrap());
    let (received, failed_handshakes) = (Received::default(), Arc::new(AtomicUsize::new(0)));
    let (log, failed) = (received.clone(), failed_handshakes.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (config, log, failed) = (config.clone(), log.clone(), failed.clone());
            std::thread::spawn(move || {
                let connection = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(connection, stream);
                match read_request(&mut tls) {
                    Some(request) => {
                        log.lock().unwrap().push(request);
                        let _ = tls
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
                        tls.conn.send_close_notify();
                        let _ = tls.flush();
                    }
                    None if tls.conn.is_handshaking() => {
                        failed.fetch_add(1, Ordering::SeqCst);
                    }
                    None => {}
                }
            });
        }
    });
    TlsReceiver { url, received, failed_handshakes, ca, _certificates: folder }
}

/// One HTTP/1.1 request's `svc-signature` and body, read through the TLS stream (which does
/// the handshake on first read).
fn read_request(tls: &mut impl Read) -> Option<(String, String)> {
    let mut data = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = tls.read(&mut chunk).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_string();
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_string())
        })
    };
    let length: usize = header("content-length")?.parse().ok()?;
    while data.len() < head_end + length {
        let n = tls.read(&mut chunk).ok().filter(|n| *n > 0)?;
        data.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&data[head_end..head_end + length]).to_string();
    Some((header(canon::signature::HEADER).unwrap_or_default(), body))
}

/// A subscription of `app` to the `shaper` step's events at `url`, after one call of the
/// workflow; the subscription's ID.
async fn one_call_to(app: &TestApp, url: &str) -> String {
    app.two_step_workflow("invoices").await;
    let subscription = app.subscribe("shaper", url).await;
    app.run_workflow("invoices").await;
    subscription
}

#[tokio::test]
async fn an_https_webhook_signed_by_the_operators_ca_receives_the_signed_event() {
    let receiver = tls_receiver();
    let app = spawn_delivering_app(|config| config.extra_ca_file = Some(receiver.ca.clone())).await;
    let secret = app.generate_secret().await;
    let subscription = one_call_to(&app, &receiver.url).await;

    let got = wait_for(&receiver.received, 1).await;
    let (signed, body) = &got[0];
    canon::signature::verify(signed, body.as_bytes(), &[secret.as_str()], now())
        .unwrap_or_else(|err| panic!("the body arrived signed ({err:?}): {signed}"));
    let event: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(event["functionName"], "shaper", "{event}");
    let log = settled_log(&app, &format!("/v3/subscriptions/{subscription}/deliveries")).await;
    assert_eq!(log["deliveries"][0]["status"], "delivered", "{log}");
    assert_eq!(log["deliveries"][0]["attempts"][0]["statusCode"], 200, "{log}");
    assert_eq!(receiver.failed_handshakes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_https_webhook_whose_certificate_no_trusted_root_signs_is_not_sent_and_the_log_says_why() {
    let receiver = tls_receiver();
    let app = spawn_delivering_app(|_| {}).await;
    let subscription = one_call_to(&app, &receiver.url).await;

    let path = format!("/v3/subscriptions/{subscription}/deliveries");
    let mut log = serde_json::Value::Null;
    for _ in 0..200 {
        log = json(app.get(&path).await).await;
        if log["deliveries"][0]["attempts"].as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let attempt = &log["deliveries"][0]["attempts"][0];
    let error = attempt["error"].as_str().unwrap_or_else(|| panic!("an attempt with an error: {log}"));
    assert!(error.contains("certificate") && error.contains("UnknownIssuer"), "{error}");
    assert!(attempt["statusCode"].is_null(), "{log}");
    assert_ne!(log["deliveries"][0]["status"], "delivered", "{log}");
    assert!(receiver.failed_handshakes.load(Ordering::SeqCst) >= 1, "the handshake reached the receiver");
    assert!(receiver.received.lock().unwrap().is_empty(), "no body crossed an untrusted connection");
}

#[tokio::test]
async fn an_https_s3_endpoint_behind_the_operators_ca_receives_the_event_object() {
    let receiver = tls_receiver();
    let app = spawn_delivering_app(|config| config.extra_ca_file = Some(receiver.ca.clone())).await;
    let endpoint = receiver.url.trim_end_matches("/hook");
    for (name, value) in
        [("s3-endpoint", endpoint), ("s3-access-key-id", "AKID"), ("s3-secret-access-key", "s")]
    {
        assert_eq!(
            app.post("/v3/secrets", serde_json::json!({"name": name, "value": value})).await.status(),
            201
        );
    }
    app.two_step_workflow("invoices").await;
    let body =
        serde_json::json!({"name": "s3", "type": "transform", "functionName": "shaper", "s3Bucket": "b"});
    assert_eq!(app.post("/v3/subscriptions", body).await.status(), 200);
    let call = app.run_workflow("invoices").await;

    // The S3 client is reqwest, not the webhooks' hyper client: the operator's CA reaches both.
    let got = wait_for(&receiver.received, 1).await;
    let object: serde_json::Value = serde_json::from_str(&got[0].1).unwrap();
    assert_eq!(object["eventID"], call["outputs"][0]["eventID"], "{object}");
    assert_eq!(receiver.failed_handshakes.load(Ordering::SeqCst), 0);
}
