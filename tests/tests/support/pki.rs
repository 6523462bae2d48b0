//! A test PKI made at run time: a certification authority, and the certificates it signs for
//! servers on loopback (`127.0.0.1` and `localhost`). Nothing is installed anywhere: a client
//! trusts the CA only when it is given the CA's PEM.

// Each test file uses its own share of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use typed_mcp::tls::{RootCertificates, ServerCertificate};

/// A certification authority of the tests.
pub struct TestCa {
    /// The CA's certificate, PEM.
    pub pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A server certificate signed by a [`TestCa`], with its key.
pub struct Leaf {
    /// The certificate chain, PEM (the server's certificate only: the CA is the root).
    pub chain_pem: String,
    /// The private key, PEM (PKCS#8).
    pub key_pem: String,
}

impl TestCa {
    /// A new CA named `name`, with a key of its own.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let key = KeyPair::generate().expect("a CA key");
        let cert = params.self_signed(&key).expect("a self-signed CA certificate");
        TestCa { pem: cert.pem(), issuer: Issuer::new(params, key) }
    }

    /// The CA as roots to trust.
    pub fn roots(&self) -> RootCertificates {
        RootCertificates::from_pem(self.pem.as_bytes()).expect("the test CA parses")
    }

    /// A certificate for `127.0.0.1` and `localhost`, signed by this CA.
    pub fn leaf(&self) -> Leaf {
        self.leaf_for(&["localhost", "127.0.0.1"])
    }

    /// A certificate for `names` (host names or IP addresses), signed by this CA.
    pub fn leaf_for(&self, names: &[&str]) -> Leaf {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("leaf parameters");
        params.distinguished_name.push(DnType::CommonName, names.first().map_or("server", String::as_str));
        let key = KeyPair::generate().expect("a server key");
        let cert = params.signed_by(&key, &self.issuer).expect("a server certificate");
        Leaf { chain_pem: cert.pem(), key_pem: key.serialize_pem() }
    }

    /// A server certificate for `127.0.0.1` and `localhost`, ready for `HttpConfig::tls`.
    pub fn server_certificate(&self) -> ServerCertificate {
        let leaf = self.leaf();
        ServerCertificate::from_pem(leaf.chain_pem.as_bytes(), leaf.key_pem.as_bytes()).expect("the leaf is usable")
    }

    /// Writes the CA (`<stem>-ca.pem`) and a fresh leaf (`<stem>-cert.pem`, `<stem>-key.pem`)
    /// under the test binary's scratch directory, for programs started by the tests; returns
    /// the three paths in that order.
    pub fn write_files(&self, stem: &str) -> (PathBuf, PathBuf, PathBuf) {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let leaf = self.leaf();
        let paths = (
            dir.join(format!("{stem}-ca.pem")),
            dir.join(format!("{stem}-cert.pem")),
            dir.join(format!("{stem}-key.pem")),
        );
        for (path, text) in [(&paths.0, &self.pem), (&paths.1, &leaf.chain_pem), (&paths.2, &leaf.key_pem)] {
            std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        }
        paths
    }
}
