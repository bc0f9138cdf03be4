package io.thallus.internal.protocol;

/** Constants of the control protocol. */
public final class Protocol {
  /** The first four bytes of a HELLO body: "THAL". Anything else is not a Thallus client. */
  public static final int MAGIC = 0x5448414C;
  /** The one protocol version this build speaks. */
  public static final int VERSION = 1;
  /** What a server accepts from a client by default: enough for SQL text, small enough to bound memory. */
  public static final int DEFAULT_SERVER_MAX_FRAME = 4 << 20;
  /**
   * What a server reads from a connection that has not authenticated yet: a HELLO is a few hundred bytes, so a
   * stranger cannot make the server buffer megabytes.
   */
  public static final int HELLO_MAX_FRAME = 64 << 10;
  /** WELCOME parameters in which the server states its limits, so a client can refuse a request before sending it. */
  public static final String SERVER_MAX_FRAME_BYTES = "server.max_frame_bytes";
  public static final String SERVER_MAX_SQL_BYTES = "server.max_sql_bytes";
  public static final String SERVER_MAX_CREDITS = "server.max_credits_per_stream";
  /**
   * HELLO parameter: the client asks the server to compress the batches of its result streams with this codec
   * ({@code io.thallus.BatchCompression}'s name: LZ4_FRAME or ZSTD). Absent: batches travel as the engine made them.
   */
  public static final String CLIENT_RESULT_COMPRESSION = "client.result_compression";
  /** What a client accepts from a server by default: ipc batches travel inside frames. */
  public static final int DEFAULT_CLIENT_MAX_FRAME = 512 << 20;
  /** Credential keys a client sends in HELLO (the server's {@code Authentication} checks them). */
  public static final String CREDENTIAL_TOKEN = "token";
  public static final String CREDENTIAL_USER = "user";
  public static final String CREDENTIAL_PASSWORD = "password";

  private Protocol() {}
}
