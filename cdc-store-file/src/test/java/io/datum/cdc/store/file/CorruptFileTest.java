package io.datum.cdc.store.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every damaged file is a {@link CdcStoreException} naming the file and the problem. */
class CorruptFileTest {

  private static final String TX = "{\"tx_end_lsn\":\"0/20\",\"event_count\":5,\"acknowledged\":";

  @TempDir Path dir;

  static Stream<Arguments> damagedFiles() {
    return Stream.of(
        Arguments.of("", "empty (0 bytes)"),
        Arguments.of("  \n", "no JSON value"),
        Arguments.of("{\"format\":1,\"slot\":\"s\",\"waterm", "not valid JSON"),
        Arguments.of(
            "{\"format\":1,\"slot\":\"s\",\"watermark\":\"0/10\",\"acknowledged_beyond\":[",
            "not valid JSON"),
        Arguments.of("not json", "not valid JSON"),
        Arguments.of("{\"format\":1} trailing", "not valid JSON"),
        Arguments.of("\0\0\0\0", "not valid JSON"),
        Arguments.of("[1,2]", "expected a JSON object"),
        Arguments.of("{\"slot\":\"s\"}", "no integer \"format\""),
        Arguments.of("{\"format\":\"1\"}", "no integer \"format\""),
        Arguments.of(file(2, "s", "\"0/10\"", "[]"), "unsupported format 2"),
        Arguments.of(file(1, "other", "\"0/10\"", "[]"), "belongs to slot \"other\""),
        Arguments.of(file(1, "s", "\"zz/10\"", "[]"), "watermark"),
        Arguments.of(file(1, "s", "\"16B3748\"", "[]"), "watermark"),
        Arguments.of(file(1, "s", "null", "[]"), "watermark"),
        Arguments.of("{\"format\":1,\"slot\":\"s\",\"acknowledged_beyond\":[]}", "watermark"),
        Arguments.of(
            "{\"format\":1,\"slot\":\"s\",\"watermark\":\"0/10\",\"acknowledged_beyond\":[],\"x\":1}",
            "\"x\""),
        Arguments.of("{\"format\":1,\"format\":1,\"slot\":\"s\"}", "format"),
        Arguments.of(
            file(1, "s", "\"0/10\"", "[" + TX + "[[0,5]]}]"), "out of bounds for event_count 5"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[-1,0]]}]"), "out of bounds"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[3,1]]}]"), "out of bounds"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[0,2],[2,3]]}]"), "overlaps"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[1]]}]"), "two event indexes"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[null]}]"), "two event indexes"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[0,\"2\"]]}]"), "acknowledged"),
        Arguments.of(file(1, "s", "\"0/10\"", "[" + TX + "[[0,1.5]]}]"), "acknowledged"),
        Arguments.of(
            file(
                1,
                "s",
                "\"0/10\"",
                "[{\"tx_end_lsn\":\"0/20\",\"event_count\":0,\"acknowledged\":[]}]"),
            "event_count is 0"),
        Arguments.of(
            file(
                1,
                "s",
                "\"0/10\"",
                "[{\"tx_end_lsn\":\"0/20\",\"event_count\":99999999999,\"acknowledged\":[]}]"),
            "event_count"),
        Arguments.of(
            file(1, "s", "\"0/10\"", "[{\"tx_end_lsn\":\"0/20\",\"acknowledged\":[]}]"),
            "event_count"),
        Arguments.of(
            file(
                1,
                "s",
                "\"0/10\"",
                "[{\"tx_end_lsn\":\"0/2G\",\"event_count\":1,\"acknowledged\":[]}]"),
            "acknowledged_beyond[0].tx_end_lsn"),
        Arguments.of(file(1, "s", "\"0/10\"", "[null]"), "acknowledged_beyond[0] is null"),
        Arguments.of(
            file(
                1,
                "s",
                "\"0/10\"",
                "[{\"tx_end_lsn\":\"0/8\",\"event_count\":1,\"acknowledged\":[]}]"),
            "not after the watermark"),
        Arguments.of(
            file(1, "s", "\"0/10\"", "[" + TX + "[]}," + TX + "[]}]"),
            "is not after the transaction"),
        Arguments.of(file(1, "s", "\"0/10\"", "null"), "acknowledged_beyond"));
  }

  private static String file(int format, String slot, String watermark, String txs) {
    return "{\"format\":"
        + format
        + ",\"slot\":\""
        + slot
        + "\",\"watermark\":"
        + watermark
        + ",\"acknowledged_beyond\":"
        + txs
        + "}";
  }

  @ParameterizedTest
  @MethodSource("damagedFiles")
  void damagedFileIsAnErrorNamingThePath(String content, String reason) throws IOException {
    Path file = dir.resolve("s.json");
    Files.write(file, content.getBytes(StandardCharsets.UTF_8));
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.load("s"));
      assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
      assertTrue(e.getMessage().contains(reason), e.getMessage());
    }
  }

  @Test
  void everyTruncationOfAValidFileIsAnError() throws IOException {
    Path file = dir.resolve("s.json");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      store.store(
          Checkpoints.checkpoint(
              "s",
              "0/16B3748",
              Checkpoints.tx("0/16B3800", 5, 0, 1, 2, 4),
              Checkpoints.tx("0/16B3900", 3)));
      byte[] whole = Files.readAllBytes(file);
      for (int length = 0; length < whole.length - 1; length++) { // the last byte is the newline
        Files.write(file, Arrays.copyOf(whole, length));
        int cut = length;
        CdcStoreException e =
            assertThrows(CdcStoreException.class, () -> store.load("s"), () -> "cut at " + cut);
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
      }
    }
  }

  @Test
  void unreadableEntryIsAnErrorNotEmpty() throws IOException {
    Files.createDirectory(dir.resolve("s.json"));
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CdcStoreException e = assertThrows(CdcStoreException.class, () -> store.load("s"));
      assertTrue(e.getMessage().contains(dir.resolve("s.json").toString()), e.getMessage());
    }
  }

  @Test
  void handWrittenValidFileIsAccepted() throws IOException {
    Files.writeString(
        dir.resolve("s.json"),
        "{ \"acknowledged_beyond\": [ "
            + TX
            + " [[0,0],[2,4]] } ],\n \"watermark\": \"0/10\","
            + " \"slot\": \"s\", \"format\": 1 }");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CdcCheckpoint checkpoint = store.load("s").orElseThrow();
      assertEquals(PgLsn.parse("0/10"), checkpoint.watermark());
      assertEquals(4, checkpoint.acknowledgedBeyond().get(0).acknowledgedCount());
      assertTrue(!checkpoint.acknowledgedBeyond().get(0).isAcknowledged(1));
    }
  }
}
