package dev.roomchat;

/** The {@code tls} kind: the TLS handshake failed (certificate, roots). */
public class TlsException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  TlsException(Details d, Throwable cause) {
    super(d, cause);
  }
}
