//! The TCP listener canon serves on. hyper answers a request it cannot parse by itself, before
//! any handler or middleware runs (400 for a header value holding a control character, 414
//! for a URI over 65,534 bytes, 431 for over 100 headers or a head over ~408 KiB), with an
//! empty body. Each connection here replaces such an answer, as hyper writes it, with the
//! same status in the `{message, code}` envelope every other error has.

use axum::http::StatusCode;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Accepts TCP connections whose bare error answers become JSON.
pub struct EnvelopeListener(pub TcpListener);

impl axum::serve::Listener for EnvelopeListener {
    type Io = EnvelopeStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, addr) = axum::serve::Listener::accept(&mut self.0).await;
        (EnvelopeStream { inner: stream, rewrite: None }, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

/// One connection. Writes are not vectored, so hyper hands over each answer's head whole.
pub struct EnvelopeStream {
    inner: TcpStream,
    rewrite: Option<Rewrite>,
}

/// An enveloped answer being written in place of hyper's `replaces` bytes.
struct Rewrite {
    bytes: Vec<u8>,
    written: usize,
    replaces: usize,
}

impl AsyncRead for EnvelopeStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for EnvelopeStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.rewrite.is_none() {
            match enveloped(buf) {
                Some(bytes) => this.rewrite = Some(Rewrite { bytes, written: 0, replaces: buf.len() }),
                None => return Pin::new(&mut this.inner).poll_write(cx, buf),
            }
        }
        // hyper retries the same buffer after Pending, so the rewrite resumes where it was.
        if let Some(rewrite) = this.rewrite.as_mut() {
            while rewrite.written < rewrite.bytes.len() {
                match ready!(Pin::new(&mut this.inner).poll_write(cx, &rewrite.bytes[rewrite.written..])) {
                    Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                    Ok(n) => rewrite.written += n,
                    Err(err) => return Poll::Ready(Err(err)),
                }
            }
        }
        Poll::Ready(Ok(this.rewrite.take().map_or(0, |r| r.replaces)))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The enveloped form of `written` when it is one of hyper's own error answers: a lone
/// response head with an error status and `content-length: 0`. canon's handlers never send
/// such a head (every error body of theirs is JSON), so nothing else matches.
pub fn enveloped(written: &[u8]) -> Option<Vec<u8>> {
    if written.len() > 1024 || !written.ends_with(b"\r\n\r\n") {
        return None;
    }
    let head = std::str::from_utf8(written).ok()?.to_ascii_lowercase();
    let status_line = head.strip_prefix("http/1.1 ").or_else(|| head.strip_prefix("http/1.0 "))?;
    let status = StatusCode::from_bytes(status_line.get(..3)?.as_bytes()).ok()?;
    let bare = head.contains("\r\ncontent-length: 0\r\n") && !head.contains("\r\ncontent-type:");
    if !(status.is_client_error() || status.is_server_error()) || !bare {
        return None;
    }
    let message = match status {
        StatusCode::BAD_REQUEST => {
            "malformed request head: the request line or a header is not valid HTTP/1.1 \
             (header values may not hold control characters)"
                .to_string()
        }
        StatusCode::URI_TOO_LONG => {
            "URI too long: the path and query string may be at most 65,534 bytes".into()
        }
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => {
            "request headers too large: at most 100 headers and about 400 KiB of request head".into()
        }
        other => other.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    let body = serde_json::json!({ "message": message, "code": status.as_u16() }).to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::enveloped;

    fn body_of(answer: &[u8]) -> serde_json::Value {
        let text = String::from_utf8(answer.to_vec()).unwrap();
        let (_, body) = text.split_once("\r\n\r\n").unwrap();
        serde_json::from_str(body).unwrap()
    }

    #[test]
    fn hypers_bare_error_answers_get_the_envelope_with_their_status() {
        for (status, head) in [
            (400, "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 12:00:00 GMT\r\n\r\n"),
            (414, "HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: Mon, 23 Nov 2026 12:00:00 GMT\r\n\r\n"),
            (431, "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n"),
        ] {
            let answer = enveloped(head.as_bytes()).expect("rewritten");
            assert!(answer.starts_with(format!("HTTP/1.1 {status} ").as_bytes()));
            let body = body_of(&answer);
            assert_eq!(body["code"], status);
            assert!(body["message"].as_str().is_some_and(|m| m.len() > 10), "{body}");
        }
    }

    #[test]
    fn answers_with_a_body_or_a_success_status_pass_untouched() {
        for head in [
            "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 0\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n",
            "HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{\"message\":\"x\"}",
            "{\"message\": \"HTTP/1.1 400 \\r\\ncontent-length: 0\\r\\n\\r\\n\"}",
        ] {
            assert!(enveloped(head.as_bytes()).is_none(), "{head:?}");
        }
    }
}
