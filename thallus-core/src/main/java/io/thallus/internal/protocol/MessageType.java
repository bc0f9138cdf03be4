package io.thallus.internal.protocol;

/** The type byte of a frame. The numbers are the wire values and never change. */
public enum MessageType {
  HELLO(1),
  WELCOME(2),
  OPEN(3),
  OPENED(4),
  NEXT(5),
  BATCH(6),
  END(7),
  ERROR(8),
  CANCEL(9),
  CLOSE(10),
  INGEST(11),
  DESCRIBE(12),
  DESCRIBED(13),
  LIST_SHARDS(14),
  SHARDS(15);

  private static final MessageType[] BY_WIRE_VALUE = new MessageType[16];

  static {
    for (MessageType type : values()) {
      BY_WIRE_VALUE[type.wireValue] = type;
    }
  }

  private final int wireValue;

  MessageType(int wireValue) {
    this.wireValue = wireValue;
  }

  public int wireValue() {
    return wireValue;
  }

  /** The type for a wire value, or null for a value no version of the protocol uses. */
  public static MessageType fromWireValue(int value) {
    return value >= 0 && value < BY_WIRE_VALUE.length ? BY_WIRE_VALUE[value] : null;
  }
}
