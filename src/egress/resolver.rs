//! The DNS resolvers of the guarded clients (reqwest's and the webhook client's): a name
//! resolving to any refused address is not dialled at all, so the address checked is the
//! address connected to.

use super::address::non_public_reason;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Every address `host` resolves to, or the refusal when any of them is not public.
async fn public_addresses(host: String) -> io::Result<Vec<SocketAddr>> {
    let addresses: Vec<_> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
    // Any refused address refuses the name: a resolver answering with a mix (or rotating
    // answers) must not get a private one dialled on a later try.
    if let Some((address, reason)) =
        addresses.iter().find_map(|a| non_public_reason(a.ip()).map(|reason| (a.ip(), reason)))
    {
        let message = format!(
            "{host} resolves to {address}, {reason}: canon only reaches public addresses \
             (an operator can allow private ones with CANON_ALLOW_PRIVATE_NETWORK=true)"
        );
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, message));
    }
    Ok(addresses)
}

/// reqwest's resolver.
pub struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses = public_addresses(host).await?;
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The webhook client's resolver: public addresses only unless the operator opened the
/// private network.
#[derive(Clone, Copy)]
pub struct Guarded {
    pub public_only: bool,
}

impl tower_service::Service<hyper_util::client::legacy::connect::dns::Name> for Guarded {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: hyper_util::client::legacy::connect::dns::Name) -> Self::Future {
        let (host, public_only) = (name.as_str().to_string(), self.public_only);
        Box::pin(async move {
            let addresses = match public_only {
                true => public_addresses(host).await?,
                false => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            Ok(addresses.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::dns::Resolve;
    use std::str::FromStr;
    use tower_service::Service;

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_never_handed_to_the_connector() {
        let err = match PublicOnly.resolve(reqwest::dns::Name::from_str("localhost").unwrap()).await {
            Ok(addresses) => panic!("resolved to {:?}", addresses.collect::<Vec<_>>()),
            Err(err) => err.to_string(),
        };
        assert!(err.contains("loopback") && err.contains("public addresses"), "{err}");
        let name = hyper_util::client::legacy::connect::dns::Name::from_str("localhost").unwrap();
        let err = Guarded { public_only: true }.call(name.clone()).await.unwrap_err().to_string();
        assert!(err.contains("loopback") && err.contains("public addresses"), "{err}");
        let opened = Guarded { public_only: false }.call(name).await.expect("resolves when opened");
        assert!(opened.into_iter().all(|a| a.ip().is_loopback()));
    }
}
