//! The DNS resolver of the guarded client: a name resolving to any refused address is not
//! dialled at all, so the address checked is the address connected to.

use super::address::non_public_reason;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::io;

pub struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addresses: Vec<_> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            // Any refused address refuses the name: a resolver answering with a mix (or
            // rotating answers) must not get a private one dialled on a later try.
            if let Some((address, reason)) =
                addresses.iter().find_map(|a| non_public_reason(a.ip()).map(|reason| (a.ip(), reason)))
            {
                let message = format!(
                    "{host} resolves to {address}, {reason}: canon only reaches public addresses \
                     (an operator can allow private ones with CANON_ALLOW_PRIVATE_NETWORK=true)"
                );
                return Err(Box::new(io::Error::new(io::ErrorKind::PermissionDenied, message)) as _);
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_never_handed_to_the_connector() {
        let err = match PublicOnly.resolve(Name::from_str("localhost").unwrap()).await {
            Ok(addresses) => panic!("resolved to {:?}", addresses.collect::<Vec<_>>()),
            Err(err) => err.to_string(),
        };
        assert!(err.contains("loopback") && err.contains("public addresses"), "{err}");
    }
}
