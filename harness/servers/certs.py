"""A throwaway certificate authority for the loopback servers that speak TLS (relay, HTTPS proxy).

contenox verifies every certificate it is shown, so a TLS stand-in serves a leaf signed
by a CA made for it alone, and the child trusts that CA through ``SSL_CERT_FILE`` (and
nothing else changes). The CA and its leaves live a day, from five minutes before now;
keys are P-256, written unencrypted beside the certificates in the server's scratch
directory, which is deleted with the case::

    ca = ThrowawayCA(directory, label="contenox-e2e relay CA", file_name="relay-ca.pem")
    context = ca.server_context("127.0.0.1", cert_name="relay-cert.pem", key_name="relay-key.pem")
    env = {"SSL_CERT_FILE": str(ca.file)}

Built on ``cryptography`` (not an ``openssl`` subprocess whose flags vary by version).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["ThrowawayCA"]

_LIFETIME = datetime.timedelta(days=1)
_SKEW = datetime.timedelta(minutes=5)


def _subject_alternative_name(host: str) -> x509.GeneralName:
    """An IP address SAN for a literal address, else a DNS name."""
    try:
        return x509.IPAddress(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return x509.DNSName(host)


class ThrowawayCA:
    """A CA written to ``directory/file_name``; it signs server leaves for the hosts asked."""

    def __init__(self, directory: Path, *, label: str, file_name: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._now = datetime.datetime.now(datetime.UTC)
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, label)])
        usage = x509.KeyUsage(
            digital_signature=True,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=True,
            encipher_only=False,
            decipher_only=False,
        )
        cert = (
            self._builder(self._name)
            .public_key(self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(usage, critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.file = directory / file_name
        self.file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def _builder(self, subject: x509.Name) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .serial_number(x509.random_serial_number())
            .not_valid_before(self._now - _SKEW)
            .not_valid_after(self._now + _LIFETIME)
        )

    def leaf(self, host: str, *, cert_name: str, key_name: str) -> tuple[Path, Path]:
        """A server certificate for ``host`` and its key, written beside the CA; their paths."""
        key = ec.generate_private_key(ec.SECP256R1())
        leaf = (
            self._builder(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
            .public_key(key.public_key())
            .add_extension(x509.SubjectAlternativeName([_subject_alternative_name(host)]), False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
            .sign(self._key, hashes.SHA256())
        )
        cert_file, key_file = self.directory / cert_name, self.directory / key_name
        cert_file.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return cert_file, key_file

    def server_context(
        self,
        host: str,
        *,
        cert_name: str,
        key_name: str,
        alpn: Sequence[str] = (),
        minimum_version: ssl.TLSVersion | None = None,
    ) -> ssl.SSLContext:
        """A server-side TLS context presenting a fresh leaf for ``host``."""
        cert_file, key_file = self.leaf(host, cert_name=cert_name, key_name=key_name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        if minimum_version is not None:
            context.minimum_version = minimum_version
        if alpn:
            context.set_alpn_protocols(list(alpn))
        context.load_cert_chain(cert_file, key_file)
        return context
