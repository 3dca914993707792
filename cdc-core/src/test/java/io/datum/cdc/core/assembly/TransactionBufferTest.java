package io.datum.cdc.core.assembly;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcException;
import io.datum.cdc.TableId;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.event.ColumnInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Buffering, spilling and replaying undecoded change messages, with subtransaction aborts. */
class TransactionBufferTest {

  private static final RelationInfo T1 =
      RelationInfo.of(
          1, new TableId("public", "t1"), 'd', List.of(new ColumnInfo("id", 23, -1, true)));
  private static final RelationInfo T2 =
      RelationInfo.of(
          2, new TableId("public", "t2"), 'd', List.of(new ColumnInfo("id", 23, -1, true)));

  private static ByteBuffer message(String text) {
    byte[] bytes = ("I" + text).getBytes(StandardCharsets.US_ASCII);
    // a slice of a larger array, as pgjdbc hands them out
    byte[] padded = new byte[bytes.length + 7];
    System.arraycopy(bytes, 0, padded, 3, bytes.length);
    return ByteBuffer.wrap(padded, 3, bytes.length).slice();
  }

  private record Replayed(String text, boolean hasXid, List<RelationInfo> relations, long lsn) {}

  private static List<Replayed> replayAll(TransactionBuffer buffer) {
    List<Replayed> out = new ArrayList<>();
    try (TransactionBuffer.Replay replay = buffer.replay()) {
      while (replay.next(
          (m, hasXid, relations, lsn) -> {
            byte[] b = new byte[m.remaining()];
            m.duplicate().get(b);
            out.add(
                new Replayed(
                    new String(b, 1, b.length - 1, StandardCharsets.US_ASCII),
                    hasXid,
                    List.of(relations),
                    lsn));
          })) {
        // collect
      }
    }
    return out;
  }

  private static void fill(TransactionBuffer buffer) {
    buffer.add(message("a"), true, new RelationInfo[] {T1}, 100, 0x1_0000_0010L);
    buffer.add(message("b"), true, new RelationInfo[] {T2}, 101, 0x1_0000_0020L);
    buffer.add(message("c"), true, new RelationInfo[] {T1, T2}, 102, 0xFFFF_FFFF_0000_0030L);
    buffer.add(message("d"), true, new RelationInfo[] {T1}, 101, 0x1_0000_0040L);
    buffer.add(message("e"), false, new RelationInfo[0], 100, 0x1_0000_0050L);
  }

  @Test
  void inMemoryAndSpilledReplaysAreEqualAndSkipAbortedSubtransactions(@TempDir Path dir)
      throws Exception {
    TransactionBuffer.Memory roomy = new TransactionBuffer.Memory(1 << 20, dir);
    TransactionBuffer.Memory tight = new TransactionBuffer.Memory(150, dir);
    TransactionBuffer inMemory = new TransactionBuffer(roomy, "xid 1");
    TransactionBuffer spilled = new TransactionBuffer(tight, "xid 2");
    fill(inMemory);
    fill(spilled);
    assertFalse(inMemory.spilled());
    assertTrue(spilled.spilled());
    assertEquals(1, tight.spilledFiles());
    assertEquals(0, tight.used(), "spilled changes leave memory");
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(
          List.of(),
          files.toList(),
          "the spill file is unlinked at once: a SIGKILL cannot leak it");
    }
    inMemory.abortSubtransaction(101);
    spilled.abortSubtransaction(101);
    inMemory.abortSubtransaction(999); // made no change: ignored
    assertEquals(3, inMemory.count());
    assertEquals(3, spilled.count());
    List<Replayed> expected =
        List.of(
            new Replayed("a", true, List.of(T1), 0x1_0000_0010L),
            new Replayed("c", true, List.of(T1, T2), 0xFFFF_FFFF_0000_0030L),
            new Replayed("e", false, List.of(), 0x1_0000_0050L));
    assertEquals(expected, replayAll(inMemory));
    assertEquals(expected, replayAll(spilled));
    assertEquals(0, roomy.used(), "closing the replay releases the memory");
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(), files.toList());
    }
  }

  @Test
  void aSpillDirectoryThatCannotBeWrittenIsAClearError(@TempDir Path dir) {
    Path missing = dir.resolve("no-such-dir");
    TransactionBuffer buffer =
        new TransactionBuffer(new TransactionBuffer.Memory(10, missing), "xid 7");
    CdcException e = assertThrows(CdcException.class, () -> fill(buffer));
    assertTrue(
        e.getMessage().contains("cannot create a spill file for xid 7 in " + missing),
        e.getMessage());
  }
}
