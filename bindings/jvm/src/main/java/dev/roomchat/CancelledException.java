package dev.roomchat;

/** The {@code cancelled} kind: the call was cancelled (an interrupt, a future's cancel); see outcomeUnknown(). */
public class CancelledException extends RoomchatException {
  private static final long serialVersionUID = 1L;

  CancelledException(Details d, Throwable cause) {
    super(d, cause);
  }
}
