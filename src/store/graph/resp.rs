//! The few Redis commands canon sends the embedded FalkorDB itself (PING, INFO, BGREWRITEAOF,
//! SHUTDOWN) on a Unix socket of their own, apart from the graph client's pool: each waits a
//! bounded time, since a hung child accepts connections and never replies.

use std::path::Path;
use std::time::Duration;

/// How long one command may wait for its reply before readiness counts it unanswered.
pub(super) const REPLY_LIMIT: Duration = Duration::from_secs(2);

/// A `field:value` line of an INFO reply.
pub(super) fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines().find_map(|line| line.strip_prefix(field)?.strip_prefix(':')).map(str::trim)
}

/// Sends one inline RESP command and reads its reply (a status or error line, or a whole bulk
/// string: INFO's), waiting at most [`REPLY_LIMIT`]: a hung child accepts and never replies.
pub(super) async fn command(socket: &Path, line: &str) -> std::io::Result<String> {
    command_within(socket, line, REPLY_LIMIT).await
}

pub(super) async fn command_within(socket: &Path, line: &str, limit: Duration) -> std::io::Result<String> {
    tokio::time::timeout(limit, unbounded_command(socket, line)).await.unwrap_or_else(|_| {
        Err(std::io::Error::new(std::io::ErrorKind::TimedOut, format!("no reply to {line}")))
    })
}

async fn unbounded_command(socket: &Path, line: &str) -> std::io::Result<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::UnixStream::connect(socket).await?;
    stream.write_all(format!("{line}\r\n").as_bytes()).await?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        reply.extend_from_slice(&buf[..n]);
        if n == 0 || reply_complete(&reply) {
            return Ok(String::from_utf8_lossy(&reply).into_owned());
        }
    }
}

/// Whether a RESP reply has fully arrived: one line, or a bulk string's announced length.
fn reply_complete(reply: &[u8]) -> bool {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else { return false };
    if reply.first() != Some(&b'$') {
        return true;
    }
    let length: i64 = std::str::from_utf8(&reply[1..end]).ok().and_then(|n| n.parse().ok()).unwrap_or(-1);
    length < 0 || reply.len() >= end + 2 + length as usize + 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_complete_at_its_line_or_its_announced_length() {
        assert!(reply_complete(b"+PONG\r\n"));
        assert!(reply_complete(b"-LOADING Redis is loading\r\n"));
        assert!(!reply_complete(b"+PON"));
        assert!(!reply_complete(b"$12\r\nloading:1\r"));
        assert!(reply_complete(b"$10\r\nloading:1\r\n\r\n"));
    }

    #[test]
    fn info_fields_are_read_by_name() {
        let info = "$60\r\n# Persistence\r\nloading:0\r\naof_rewrite_in_progress:1\r\n";
        assert_eq!(info_field(info, "aof_rewrite_in_progress"), Some("1"));
        assert_eq!(info_field(info, "loading"), Some("0"));
        assert_eq!(info_field(info, "aof_rewrite"), None);
    }
}
