//! Untrusted documents cannot take the server down (#48): an e-mail nested past the depth
//! limit is a 422 from infer-schema and a failed call from a workflow, each naming the limit,
//! while the same process keeps answering another tenant; a crafted or broken PDF is an
//! error or a document, never a crash.

use crate::helpers::{assert_error, json, spawn_app, unique, TestApp};
use base64::Engine;
use canon::store::records::keys::Environment;
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// An e-mail whose body is an attached message, `levels` deep (32 bytes a level).
pub(crate) fn nested_mail(levels: usize) -> Vec<u8> {
    let mut mail =
        String::from("From: attacker@evil.example\r\nTo: intake@canon.example\r\nSubject: deep\r\n");
    for _ in 0..levels {
        mail.push_str("Content-Type: message/rfc822\r\n\r\n");
    }
    (mail + "Content-Type: text/plain\r\n\r\nbottom\r\n").into_bytes()
}

async fn infer(app: &TestApp, key: &str, file_name: &str, bytes: Vec<u8>) -> reqwest::Response {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(file_name.to_string()));
    app.client
        .request(Method::POST, format!("{}/v3/infer-schema", app.address))
        .header("x-api-key", key)
        .multipart(form)
        .send()
        .await
        .expect("canon answered")
}

/// A key of another account: the tenant that must not notice the attack.
async fn other_tenant(app: &TestApp) -> String {
    app.new_key(Some(&unique("bystander")), Environment::Sandbox).await
}

#[tokio::test]
async fn a_mail_nested_3000_deep_is_refused_with_422_naming_the_depth_limit_and_canon_keeps_serving() {
    let app = spawn_app().await;
    let bystander = other_tenant(&app).await;
    let mail = nested_mail(3_000);
    assert!(mail.len() > 90_000, "a ~100 KB mail: {}", mail.len());
    let started = Instant::now();
    let (attack, during) = tokio::join!(
        infer(&app, &app.api_key, "deep.eml", mail),
        infer(&app, &bystander, "note.txt", b"Invoice number: INV-1\nTotal: $5.00\n".to_vec()),
    );
    let body = assert_error(attack, 422).await;
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("nesting depth of 20"), "names the limit and its value: {body}");
    assert!(started.elapsed() < Duration::from_secs(10), "refused quickly: {:?}", started.elapsed());
    assert_eq!(during.status(), 200, "the other tenant's request during the attack succeeds");
    // The same in-process server still answers both tenants afterwards.
    let after = infer(&app, &bystander, "note.txt", b"Total: $5.00\n".to_vec()).await;
    assert_eq!(after.status(), 200);
    assert_eq!(app.get("/v3/buckets").await.status(), 200);
}

#[tokio::test]
async fn a_mail_nested_1400_deep_as_a_workflow_call_fails_naming_the_depth_limit() {
    let app = spawn_app().await;
    app.create_function(
        json!({"functionName": "attachments", "type": "split", "splitConfig": {"by": "attachments"}}),
    )
    .await;
    app.pipeline("mail", &["attachments"], &[]).await;
    let content = base64::engine::general_purpose::STANDARD.encode(nested_mail(1_400));
    let body = json!({ "input": { "singleFile": { "inputContent": content, "inputType": "email" } } });
    // Not waited for: the job worker decodes it.
    let response = app.post("/v3/workflows/mail/call", body).await;
    assert_eq!(response.status(), 202);
    let call_id = json(response).await["call"]["callID"].as_str().unwrap().to_string();
    let call = app.finished_call(&call_id).await;
    assert_eq!(call["status"], "failed", "{call}");
    let error = &call["errors"][0];
    assert_eq!(error["kind"], "input_limit", "{call}");
    assert!(error["errorMessage"].as_str().unwrap().contains("nesting depth of 20"), "{error}");
    // The worker is still there: a sound e-mail from another tenant's point of view completes.
    let mail = b"From: a@a.example\r\nSubject: ok\r\n\r\nhello\r\n";
    let content = base64::engine::general_purpose::STANDARD.encode(mail);
    let body = json!({ "input": { "singleFile": { "inputContent": content, "inputType": "email" } } });
    let call = json(app.post("/v3/workflows/mail/call?wait=true", body).await).await;
    assert_eq!(call["call"]["status"], "completed", "{call}");
}

#[tokio::test]
async fn crafted_and_broken_pdfs_are_an_error_or_a_document_never_a_crash() {
    let app = spawn_app().await;
    let bystander = other_tenant(&app).await;
    let sound = std::fs::read(crate::helpers::source_dir().join("tests/fixtures/invoice.pdf")).unwrap();
    let mut pdfs: Vec<Vec<u8>> = vec![
        b"%PDF-1.7\n".to_vec(),
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 1 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF".to_vec(),
        // Pages that are their own kids: a loop in the page tree.
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [2 0 R] /Count 1000000 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF".to_vec(),
        sound[..sound.len() / 2].to_vec(),
    ];
    let mut flipped = sound.clone();
    for i in (0..flipped.len()).step_by(97) {
        flipped[i] ^= 0x5a;
    }
    pdfs.push(flipped);
    for (i, pdf) in pdfs.into_iter().enumerate() {
        let response = infer(&app, &app.api_key, "crafted.pdf", pdf).await;
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        assert!(status == 200 || status == 422, "pdf {i}: an error or a document, got {status} {body}");
        if status == 422 {
            assert!(body["message"].as_str().unwrap().starts_with("file: "), "pdf {i}: {body}");
        }
    }
    let after = infer(&app, &bystander, "invoice.pdf", sound).await;
    assert_eq!(after.status(), 200, "canon still decodes PDFs for everyone");
}
