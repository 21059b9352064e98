//! Egress: everything a tenant's configuration can make canon reach outside itself, and the
//! one place that decides whether it may.
//!
//! - **Outbound URLs** (send webhooks, S3 endpoints, language-model base URLs, and every
//!   later destination: subscriptions, connectors): HTTPS to a public address. Loopback,
//!   private, link-local, multicast, unspecified and the other special ranges of
//!   [`address`] are refused, for IPv4, IPv6 and IPv4 inside IPv6. Checked when a
//!   configuration is saved ([`Egress::check_url_resolving`], a 400 that says why) and again
//!   on every request: [`Egress::request`] refuses an IP literal, and the client's resolver
//!   drops a name that resolves to a refused address, so the address actually dialled is the
//!   one checked (DNS rebinding cannot slip past). Redirects are never followed and no proxy
//!   from the server's environment is used. Webhook deliveries go out on a client of their
//!   own ([`webhooks`], hyper without reqwest's per-request layers) under the same checks:
//!   [`Egress::check_webhook_url`] and the same resolver rule. `CANON_ALLOW_PRIVATE_NETWORK=true` (an operator's
//!   decision; tests and development) lifts the address rule and allows plain HTTP.
//! - **Server environment variables**: a configuration may name one (`apiKeyEnv`,
//!   `s3AccessKeyIdEnv`, …) only if the operator listed it in `CANON_TENANT_ENV_ALLOWLIST`;
//!   names starting with `CANON_` are never readable, listed or not. Tenants keep their
//!   credentials in canon's secret store instead ([`crate::secrets`]).
//! - **Local files**: `object_store` sends without an endpoint write only under the tenant's
//!   own folder of the object store root ([`objects`]).
//! - **Replies**: every answer from outside is read under a cap ([`reply`]), so a body
//!   without end costs canon the cap, not the body.

pub mod address;
pub mod objects;
pub mod reply;
mod resolver;
pub mod roots;
pub mod webhooks;

use reqwest::{Method, RequestBuilder, Url};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the operator decided about tenants' reach.
#[derive(Clone, Debug, Default)]
pub struct EgressPolicy {
    /// `CANON_ALLOW_PRIVATE_NETWORK`: private and loopback addresses and plain HTTP allowed.
    pub allow_private_network: bool,
    /// `CANON_TENANT_ENV_ALLOWLIST`: server variables a configuration may name.
    pub env_allowlist: Vec<String>,
    /// `CANON_OBJECT_STORE_DIR`: root of local object-store sends.
    pub object_store_dir: PathBuf,
    /// `CANON_EXTRA_CA_FILE`: root certificates trusted beside the public ones ([`roots`]).
    pub extra_ca_file: Option<PathBuf>,
}

/// The guard and the HTTP client every tenant-directed request goes through.
pub struct Egress {
    policy: EgressPolicy,
    client: reqwest::Client,
    webhooks: webhooks::WebhookClient,
}

/// Prefix of canon's own configuration: never readable by a tenant.
const RESERVED_ENV_PREFIX: &str = "CANON_";

impl Egress {
    pub fn new(policy: EgressPolicy) -> anyhow::Result<Arc<Self>> {
        for name in &policy.env_allowlist {
            if name.starts_with(RESERVED_ENV_PREFIX) {
                tracing::warn!(%name, "CANON_TENANT_ENV_ALLOWLIST names a CANON_ variable; it stays unreadable");
            }
        }
        if policy.allow_private_network {
            tracing::warn!(
                "CANON_ALLOW_PRIVATE_NETWORK=true: tenants may reach loopback and private addresses"
            );
        }
        let extra_roots = roots::extra(policy.extra_ca_file.as_deref())?;
        let mut builder = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        for root in &extra_roots {
            builder = builder.add_root_certificate(reqwest::Certificate::from_der(root)?);
        }
        let builder = if policy.allow_private_network {
            builder
        } else {
            builder.dns_resolver(Arc::new(resolver::PublicOnly))
        };
        let webhooks = webhooks::WebhookClient::new(!policy.allow_private_network, &extra_roots)?;
        Ok(Arc::new(Self { policy, client: builder.build()?, webhooks }))
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// A request to a tenant-chosen URL, on the guarded client; refused with the reason.
    pub fn request(&self, method: Method, url: &str) -> Result<RequestBuilder, String> {
        Ok(self.client.request(method, self.check_url(url)?))
    }

    /// The client deliveries POST webhooks with (requests to URLs [`Self::check_webhook_url`]
    /// passed).
    pub fn webhooks(&self) -> &webhooks::WebhookClient {
        &self.webhooks
    }

    /// [`Self::check_url`] for [`Self::webhooks`]: the URL as hyper takes it.
    pub fn check_webhook_url(&self, text: &str) -> Result<http::Uri, String> {
        let url = self.check_url(text)?;
        http::Uri::try_from(url.as_str()).map_err(|err| format!("{text:?} is not a URL ({err})"))
    }

    /// The URL's form and, for an IP literal, its address (no DNS).
    pub fn check_url(&self, text: &str) -> Result<Url, String> {
        let url = Url::parse(text.trim()).map_err(|err| format!("{text:?} is not a URL ({err})"))?;
        match url.scheme() {
            "https" => {}
            "http" if self.policy.allow_private_network => {}
            "http" => return Err(format!("{text:?} must use https (plain http is refused)")),
            other => return Err(format!("{text:?}: scheme {other:?} is refused; use https")),
        }
        let host = url.host().ok_or_else(|| format!("{text:?} has no host"))?;
        if self.policy.allow_private_network {
            return Ok(url);
        }
        let refusal = |what: String, reason: &str| {
            Err(format!(
                "{what} is {reason}: canon only reaches public addresses (an operator can allow \
                 private ones with CANON_ALLOW_PRIVATE_NETWORK=true)"
            ))
        };
        match host {
            url::Host::Ipv4(ip) => address::non_public_reason(IpAddr::V4(ip))
                .map_or(Ok(url.clone()), |r| refusal(ip.to_string(), r)),
            url::Host::Ipv6(ip) => address::non_public_reason(IpAddr::V6(ip))
                .map_or(Ok(url.clone()), |r| refusal(ip.to_string(), r)),
            url::Host::Domain(name) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    return refusal(name, "a loopback name");
                }
                Ok(url.clone())
            }
        }
    }

    /// [`Self::check_url`], and for a name every address it resolves to now. A name that
    /// does not resolve passes: the resolver checks again when a request is made.
    pub async fn check_url_resolving(&self, text: &str) -> Result<Url, String> {
        let url = self.check_url(text)?;
        if self.policy.allow_private_network {
            return Ok(url);
        }
        if let Some(url::Host::Domain(name)) = url.host() {
            let lookup = tokio::net::lookup_host((name, url.port_or_known_default().unwrap_or(443)));
            if let Ok(Ok(addresses)) = tokio::time::timeout(Duration::from_secs(3), lookup).await {
                for address in addresses {
                    if let Some(reason) = address::non_public_reason(address.ip()) {
                        return Err(format!(
                            "{name} resolves to {}, {reason}: canon only reaches public addresses \
                             (an operator can allow private ones with CANON_ALLOW_PRIVATE_NETWORK=true)",
                            address.ip()
                        ));
                    }
                }
            }
        }
        Ok(url)
    }

    /// Whether a configuration may name the server variable `name` (the reason when not).
    pub fn check_env_name(&self, name: &str) -> Result<(), String> {
        if name.starts_with(RESERVED_ENV_PREFIX) {
            return Err(format!("{name:?} is canon's own configuration and never readable by a tenant"));
        }
        if !self.policy.env_allowlist.iter().any(|listed| listed == name) {
            return Err(format!(
                "server environment variable {name:?} is not in CANON_TENANT_ENV_ALLOWLIST; keep the \
                 value in canon's secret store (POST /v3/secrets) and name it in the …Secret field \
                 instead"
            ));
        }
        Ok(())
    }

    /// The value of an allowlisted server variable.
    pub fn env(&self, name: &str) -> Result<String, String> {
        self.check_env_name(name)?;
        std::env::var(name)
            .ok()
            .filter(|value| !value.is_empty())
            .ok_or_else(|| format!("environment variable {name} is not set on the server"))
    }
}

/// A request error with its causes (the guard's refusal is a cause, not the top message).
pub fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(allow_private_network: bool) -> Arc<Egress> {
        Egress::new(EgressPolicy {
            allow_private_network,
            env_allowlist: vec!["PARTNER_TOKEN".into(), "CANON_JWT_SECRET".into()],
            object_store_dir: PathBuf::from("/nonexistent"),
            extra_ca_file: None,
        })
        .unwrap()
    }

    #[test]
    fn only_https_to_public_addresses_passes_by_default() {
        let egress = guard(false);
        assert!(egress.check_url("https://hooks.example.com/in").is_ok());
        assert!(egress.check_url("https://93.184.216.34/in").is_ok());
        for refused in [
            "http://hooks.example.com/in",
            "ftp://hooks.example.com/",
            "file:///etc/passwd",
            "https://127.0.0.1/",
            "https://2130706433/",
            "https://127.1/",
            "https://[::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://169.254.169.254/latest/meta-data/",
            "https://[fd00::1]/",
            "https://0.0.0.0/",
            "https://localhost/",
            "https://api.localhost./",
            "not a url",
        ] {
            assert!(egress.check_url(refused).is_err(), "{refused} must be refused");
        }
        let reason = egress.check_url("https://169.254.169.254/").unwrap_err();
        assert!(reason.contains("link-local") && reason.contains("CANON_ALLOW_PRIVATE_NETWORK"), "{reason}");
    }

    #[test]
    fn the_operator_can_open_the_private_network() {
        let egress = guard(true);
        assert!(egress.check_url("http://127.0.0.1:9000/hook").is_ok());
        assert!(egress.check_url("file:///etc/passwd").is_err());
    }

    #[test]
    fn only_listed_variables_outside_canons_own_are_readable() {
        let egress = guard(false);
        assert!(egress.check_env_name("PARTNER_TOKEN").is_ok());
        assert!(egress.check_env_name("HOME").unwrap_err().contains("CANON_TENANT_ENV_ALLOWLIST"));
        assert!(egress.check_env_name("CANON_JWT_SECRET").unwrap_err().contains("never readable"));
    }
}
