//! The certificates outbound HTTPS trusts: the public web's roots (webpki's), and an
//! operator's own CA from `CANON_EXTRA_CA_FILE` (a private S3, model endpoint or receiver
//! behind a company CA). Only the operator sets it; nothing a tenant configures adds a root.

use rustls::pki_types::CertificateDer;
use std::path::Path;

/// The certificates of the PEM file at `path` (none without one). A file that cannot be read
/// or holds no certificate stops the start, naming the setting: a deployment that meant to
/// trust its CA must not run trusting only the public roots and fail every send.
pub fn extra(path: Option<&Path>) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let Some(path) = path else { return Ok(Vec::new()) };
    let unreadable = |why: String| anyhow::anyhow!("CANON_EXTRA_CA_FILE {}: {why}", path.display());
    let pem = std::fs::read(path).map_err(|err| unreadable(err.to_string()))?;
    let certificates = rustls_pemfile::certs(&mut pem.as_slice())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| unreadable(format!("not PEM certificates ({err})")))?;
    if certificates.is_empty() {
        return Err(unreadable("holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into()));
    }
    Ok(certificates)
}

/// webpki's roots and `extra`, for a rustls client.
pub fn store(extra: &[CertificateDer<'static>]) -> anyhow::Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for certificate in extra {
        roots.add(certificate.clone()).map_err(|err| {
            anyhow::anyhow!("CANON_EXTRA_CA_FILE: a certificate is not a usable root ({err})")
        })?;
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_certificate_is_refused_naming_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.pem");
        std::fs::write(&file, "not a certificate").unwrap();
        let err = extra(Some(&file)).unwrap_err().to_string();
        assert!(err.contains("CANON_EXTRA_CA_FILE") && err.contains("no PEM certificate"), "{err}");
        let missing = extra(Some(&dir.path().join("missing.pem"))).unwrap_err().to_string();
        assert!(missing.contains("CANON_EXTRA_CA_FILE"), "{missing}");
        assert!(extra(None).unwrap().is_empty());
    }
}
