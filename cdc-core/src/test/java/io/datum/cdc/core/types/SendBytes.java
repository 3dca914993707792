package io.datum.cdc.core.types;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Big-endian byte builder, as pq_send* writes. */
public final class SendBytes {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final DataOutputStream out = new DataOutputStream(bytes);

  public static SendBytes of() {
    return new SendBytes();
  }

  public SendBytes i8(int v) {
    return write(() -> out.writeByte(v));
  }

  public SendBytes i16(int v) {
    return write(() -> out.writeShort(v));
  }

  public SendBytes i32(int v) {
    return write(() -> out.writeInt(v));
  }

  public SendBytes i64(long v) {
    return write(() -> out.writeLong(v));
  }

  public SendBytes f64(double v) {
    return write(() -> out.writeDouble(v));
  }

  public SendBytes raw(byte[] b) {
    bytes.writeBytes(b);
    return this;
  }

  public SendBytes text(String s) {
    return raw(s.getBytes(StandardCharsets.UTF_8));
  }

  /** An array_send header: ndim, flags, element oid, then (length, lower bound) pairs. */
  public SendBytes arrayHeader(int flags, int elementOid, int... dimsAndBounds) {
    i32(dimsAndBounds.length / 2).i32(flags).i32(elementOid);
    for (int v : dimsAndBounds) {
      i32(v);
    }
    return this;
  }

  /** An array element: its length then its bytes. */
  public SendBytes element(byte[] b) {
    return i32(b.length).raw(b);
  }

  public byte[] build() {
    return bytes.toByteArray();
  }

  private interface Io {
    void run() throws IOException;
  }

  private SendBytes write(Io io) {
    try {
      io.run();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }
}
