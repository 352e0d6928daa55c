"""Imported by the aiortc fixtures before anything else of aiortc's is used.

GStreamer's webrtcbin signs its DTLS handshakes with an RSA certificate, and aiortc 1.16 offers ECDSA cipher suites
only: the handshake ends "no shared cipher" (aiortc pull request #1392). This offers the RSA suite too, as browsers
do; nothing else of aiortc changes."""
from aiortc.rtcdtlstransport import RTCCertificate

_context = RTCCertificate._create_ssl_context


def _with_rsa(self, srtp_profiles):
    ctx = _context(self, srtp_profiles)
    ctx.set_cipher_list(b"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305:"
                        b"ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA")
    return ctx


RTCCertificate._create_ssl_context = _with_rsa
