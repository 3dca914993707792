package io.datum.cdc.cli.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.FilterOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HeldOutputTest {

  /** A target that keeps each write apart. */
  private static final class Writes extends FilterOutputStream {
    final List<byte[]> writes = new ArrayList<>();
    final ByteArrayOutputStream all = new ByteArrayOutputStream();

    Writes() {
      super(java.io.OutputStream.nullOutputStream());
    }

    @Override
    public void write(byte[] b, int off, int len) {
      writes.add(Arrays.copyOfRange(b, off, off + len));
      all.write(b, off, len);
    }
  }

  @Test
  void nothingReachesTheTargetBeforeAFlushThenWholeLinesInAtomicWrites() throws Exception {
    Writes target = new Writes();
    HeldOutput held = new HeldOutput(target);
    Random random = new Random(7);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (int i = 0; i < 400; i++) {
      // mostly short lines, some longer than a pipe's atomic write
      int length =
          random.nextInt(10) == 0 ? 5000 + random.nextInt(20_000) : 1 + random.nextInt(600);
      byte[] line = new byte[length + 1];
      Arrays.fill(line, (byte) ('a' + i % 26));
      line[length] = '\n';
      held.write(line, 0, line.length);
      expected.write(line, 0, line.length);
    }
    assertEquals(0, target.all.size());
    assertEquals(expected.size(), held.held());
    held.flush();
    assertEquals(0, held.held());
    assertArrayEquals(expected.toByteArray(), target.all.toByteArray());
    for (byte[] w : target.writes) {
      assertEquals('\n', w[w.length - 1], "a write ends at a line end");
      int lines = 0;
      for (byte b : w) {
        lines += b == '\n' ? 1 : 0;
      }
      assertTrue(
          w.length <= HeldOutput.ATOMIC || lines == 1,
          "a write above " + HeldOutput.ATOMIC + " bytes holds one line, not " + lines);
    }
    assertTrue(target.writes.size() < 400, "lines share writes: " + target.writes.size());
  }

  @Test
  void aFlushOfAPartialLineWritesItAsItIs() throws Exception {
    Writes target = new Writes();
    HeldOutput held = new HeldOutput(target);
    held.write("{\"a\":1}\n".getBytes(StandardCharsets.UTF_8));
    held.write('y');
    held.flush();
    assertEquals("{\"a\":1}\ny", target.all.toString(StandardCharsets.UTF_8));
  }
}
