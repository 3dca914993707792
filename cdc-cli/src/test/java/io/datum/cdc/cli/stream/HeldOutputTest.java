package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HeldOutputTest {

  @Test
  void bytesReachTheTargetOnlyAtAFlushInOneWrite() throws Exception {
    ByteArrayOutputStream target = new ByteArrayOutputStream();
    int[] writes = {0};
    HeldOutput held =
        new HeldOutput(
            new java.io.FilterOutputStream(target) {
              @Override
              public void write(byte[] b, int off, int len) {
                writes[0]++;
                target.write(b, off, len);
              }
            });
    byte[] big = new byte[200_000]; // more than the initial buffer: it grows, nothing is written
    java.util.Arrays.fill(big, (byte) 'x');
    held.write("{\"a\":1}\n".getBytes(StandardCharsets.UTF_8));
    held.write(big, 0, big.length);
    held.write('\n');
    assertEquals(0, target.size());
    assertEquals(8 + 200_001, held.held());
    held.flush();
    assertEquals(1, writes[0]);
    assertEquals(0, held.held());
    byte[] out = target.toByteArray();
    assertEquals(8 + 200_001, out.length);
    assertArrayEquals(
        "{\"a\":1}\n".getBytes(StandardCharsets.UTF_8), java.util.Arrays.copyOf(out, 8));
    held.write('y');
    held.flush();
    assertEquals('y', target.toByteArray()[out.length]);
  }
}
