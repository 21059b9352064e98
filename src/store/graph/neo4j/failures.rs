//! Neo4j's failures as graph errors: which are a constraint, a server away, a passing
//! conflict worth running again, or a bad query.

use super::super::{GraphError, READ_TIME_LIMIT};

/// Neo4j's status code for a write rejected by a uniqueness (or other) constraint.
const CONSTRAINT_VIOLATION: &str = "Neo.ClientError.Schema.ConstraintValidationFailed";

/// The graph error a neo4rs error stands for.
pub(super) fn map_error(error: neo4rs::Error) -> GraphError {
    use neo4rs::Error as E;
    match &error {
        E::Neo4j(failure) if failure.code() == CONSTRAINT_VIOLATION => {
            GraphError::ConstraintViolation(failure.message().to_owned())
        }
        E::Neo4j(failure) if is_unavailable_code(failure.code()) => {
            GraphError::Unavailable(error.to_string())
        }
        E::Neo4j(failure) if is_timeout_code(failure.code()) => GraphError::TimedOut(READ_TIME_LIMIT),
        // A failure while rows are pulled (where Neo4j reports most write errors, constraint
        // violations included) reaches us only as the Debug text of Bolt's FAILURE message.
        E::UnexpectedMessage(text) => match failure_field(text, "code") {
            Some(code) => {
                let message = failure_field(text, "message").unwrap_or_else(|| text.clone());
                if code == CONSTRAINT_VIOLATION {
                    GraphError::ConstraintViolation(message)
                } else if is_unavailable_code(&code) {
                    GraphError::Unavailable(format!("{code}: {message}"))
                } else if is_timeout_code(&code) {
                    GraphError::TimedOut(READ_TIME_LIMIT)
                } else {
                    GraphError::Query(format!("{code}: {message}"))
                }
            }
            None => GraphError::Query(error.to_string()),
        },
        E::IOError { .. }
        | E::ConnectionError
        | E::UrlParseError(_)
        | E::UnsupportedScheme(_)
        | E::InvalidDnsName(_)
        | E::InvalidConfig
        | E::UnsupportedVersion(_)
        | E::AuthenticationError(_) => GraphError::Unavailable(error.to_string()),
        E::ConversionError | E::DeserializationError(_) => GraphError::Conversion(error.to_string()),
        _ => GraphError::Query(error.to_string()),
    }
}

/// Whether Neo4j failed the statement for a passing reason (a deadlock between concurrent
/// transactions, a lock wait that timed out), so the same statement may simply run again.
/// A database that is down is transient too by its code, but it is `Unavailable` instead:
/// retrying it would only hold the request until the statement timeout.
pub(super) fn is_transient(error: &neo4rs::Error) -> bool {
    let code = match error {
        neo4rs::Error::Neo4j(failure) => Some(failure.code().to_owned()),
        neo4rs::Error::UnexpectedMessage(text) => failure_field(text, "code"),
        _ => None,
    };
    code.is_some_and(|code| {
        code.starts_with("Neo.TransientError.") && !is_unavailable_code(&code) && !is_timeout_code(&code)
    })
}

/// Whether neo4rs failed to read a reply (a value or a message it cannot decode): the rest of
/// the reply is still on the wire and what the statement opened on the server (a transaction,
/// its locks) still open, so the connection is out of step. A FAILURE the server sent (even one
/// neo4rs reports as an unexpected message) and a connection that broke are not.
pub(super) fn leaves_connection_out_of_step(error: &neo4rs::Error) -> bool {
    use neo4rs::Error as E;
    match error {
        E::UnknownType(_) | E::UnknownMessage(_) | E::InvalidTypeMarker(_) | E::DeserializationError(_) => {
            true
        }
        E::UnexpectedMessage(text) => failure_field(text, "code").is_none(),
        _ => false,
    }
}

/// Codes of a transaction Neo4j stopped at its `db.transaction.timeout` (set to
/// [`READ_TIME_LIMIT`] where canon starts Neo4j: the launcher, `compose.yaml`). Neo4j 5.26
/// answers `Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration` to a Bolt
/// auto-commit statement past the server's setting (seen on the launcher); other versions
/// and forms say `…TransactionTimedOut`, in another class before 5.x, so the name is matched.
/// It is never run again (it would only run out of time again).
fn is_timeout_code(code: &str) -> bool {
    code.contains(".TransactionTimedOut")
}

/// Codes meaning the server cannot serve us now (credentials, database down), not a bad query.
fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("Neo.ClientError.Security.")
        || code == "Neo.TransientError.General.DatabaseUnavailable"
        || code == "Neo.ClientError.Database.DatabaseNotFound"
}

/// Reads one string field (`code`, `message`) out of the Debug text of a Bolt FAILURE, undoing
/// Debug's escapes; `None` when the text is not such a failure.
fn failure_field(text: &str, field: &str) -> Option<String> {
    let marker = format!("BoltString {{ value: \"{field}\" }}: String(BoltString {{ value: \"");
    let start = text.find(&marker)? + marker.len();
    let mut value = String::new();
    let mut chars = text[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => match chars.next()? {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                'r' => value.push('\r'),
                '0' => value.push('\0'),
                // `\u{…}` escapes only non-printable characters: keep them as written.
                'u' => value.push_str("\\u"),
                escaped => value.push(escaped),
            },
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use neo4rs::{BoltMap, BoltString, BoltType};

    fn bolt_map(entries: Vec<(&str, BoltType)>) -> BoltMap {
        entries.into_iter().map(|(key, value)| (BoltString::new(key), value)).collect()
    }

    /// The Debug text neo4rs gives for a FAILURE received while pulling rows.
    fn pull_failure_text(code: &str, message: &str) -> String {
        let metadata = bolt_map(vec![("code", BoltType::from(code)), ("message", BoltType::from(message))]);
        format!("unexpected response for PULL: Ok(Failure(Failure {{ metadata: {metadata:?} }}))")
    }

    #[test]
    fn a_constraint_failure_while_pulling_maps_to_constraint_violation() {
        // (`neo4rs::Neo4jError`, the form a failure at RUN takes, has no public constructor.)
        let text = pull_failure_text(
            CONSTRAINT_VIOLATION,
            "Node(0) already exists with label `Bucket` and property `id` = 'b1'",
        );
        let error = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(
            matches!(&error, GraphError::ConstraintViolation(message)
                if message == "Node(0) already exists with label `Bucket` and property `id` = 'b1'"),
            "{error:?}"
        );
    }

    #[test]
    fn a_transaction_neo4j_stopped_at_its_timeout_is_a_timed_out_read_never_run_again() {
        // What Neo4j 5.26 answers past its db.transaction.timeout (seen on the launcher).
        let code = "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration";
        let text = pull_failure_text(code, "The transaction has not completed within the timeout specified");
        let error = map_error(neo4rs::Error::UnexpectedMessage(text.clone()));
        assert!(matches!(error, GraphError::TimedOut(limit) if limit == READ_TIME_LIMIT), "{error:?}");
        let transient = pull_failure_text("Neo.TransientError.Transaction.TransactionTimedOut", "stopped");
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(transient)));
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(text)));
    }

    #[test]
    fn a_pull_failure_message_is_unescaped() {
        let text =
            pull_failure_text("Neo.ClientError.Statement.ArithmeticError", "said \"no\"\nand C:\\ left");
        let error = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(
            matches!(&error, GraphError::Query(message)
                if message == "Neo.ClientError.Statement.ArithmeticError: said \"no\"\nand C:\\ left"),
            "{error:?}"
        );
    }

    #[test]
    fn only_a_reply_neo4rs_could_not_read_leaves_the_connection_out_of_step() {
        let unreadable = [
            neo4rs::Error::UnknownType("0xC7".to_owned()),
            neo4rs::Error::InvalidTypeMarker("invalid string marker".to_owned()),
            neo4rs::Error::UnexpectedMessage("unexpected response for PULL: Ok(Success(..))".to_owned()),
        ];
        for error in &unreadable {
            assert!(leaves_connection_out_of_step(error), "{error:?}");
        }
        let answered_or_broken = [
            neo4rs::Error::UnexpectedMessage(pull_failure_text(CONSTRAINT_VIOLATION, "exists")),
            neo4rs::Error::ConnectionError,
            neo4rs::Error::from(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone")),
        ];
        for error in &answered_or_broken {
            assert!(!leaves_connection_out_of_step(error), "{error:?}");
        }
    }

    #[test]
    fn connection_failures_map_to_unavailable() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        for error in [
            neo4rs::Error::from(refused),
            neo4rs::Error::ConnectionError,
            neo4rs::Error::AuthenticationError("bad credentials".to_owned()),
            neo4rs::Error::UnsupportedScheme("http".to_owned()),
        ] {
            let mapped = map_error(error);
            assert!(matches!(mapped, GraphError::Unavailable(_)), "{mapped:?}");
        }
        let text = pull_failure_text("Neo.TransientError.General.DatabaseUnavailable", "database is down");
        let mapped = map_error(neo4rs::Error::UnexpectedMessage(text));
        assert!(matches!(mapped, GraphError::Unavailable(_)), "{mapped:?}");
    }

    #[test]
    fn a_deadlock_while_pulling_is_run_again_but_a_database_down_or_a_bad_query_is_not() {
        let deadlock = pull_failure_text("Neo.TransientError.Transaction.DeadlockDetected", "cycle");
        assert!(is_transient(&neo4rs::Error::UnexpectedMessage(deadlock)));
        let down = pull_failure_text("Neo.TransientError.General.DatabaseUnavailable", "down");
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(down)));
        let syntax = pull_failure_text("Neo.ClientError.Statement.SyntaxError", "bad");
        assert!(!is_transient(&neo4rs::Error::UnexpectedMessage(syntax)));
        assert!(!is_transient(&neo4rs::Error::ConnectionError));
    }

    #[test]
    fn other_failures_map_to_query_errors() {
        let unexpected = map_error(neo4rs::Error::UnexpectedMessage("odd reply".to_owned()));
        assert!(
            matches!(&unexpected, GraphError::Query(text) if text.contains("odd reply")),
            "{unexpected:?}"
        );
        let long = map_error(neo4rs::Error::StringTooLong);
        assert!(matches!(long, GraphError::Query(_)), "{long:?}");
    }
}
