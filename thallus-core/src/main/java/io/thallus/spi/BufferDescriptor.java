package io.thallus.spi;

/**
 * Where one Arrow buffer of a batch lies, in the terms of the transport that moves it: an offset in the batch body
 * (tcp), an offset in a shared segment named by {@code key} (shm), or a remote address and key (rdma).
 */
public record BufferDescriptor(long address, long length, int key) {
  public BufferDescriptor {
    if (length < 0) {
      throw new IllegalArgumentException("negative buffer length " + length);
    }
  }
}
