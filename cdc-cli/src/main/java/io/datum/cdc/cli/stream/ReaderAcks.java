package io.datum.cdc.cli.stream;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acknowledgements of {@code pgcdc stream --acks-from SOURCE}: the reader of stdout says which
 * printed events it has processed, one line each, and only those are acknowledged.
 *
 * <p>A line is either a JSON object with {@code tx_end_lsn} and {@code event_index}, and for a row
 * read by a snapshot its {@code snapshot.chunk} (the event's own line, echoed back as read, is
 * one), or the words {@code TX_END_LSN EVENT_INDEX}, plus {@code CHUNK} for a read row; blank lines
 * are ignored. A line naming an event this process printed and that awaits its acknowledgement
 * acknowledges it; a line naming any other event (printed by an earlier process, or acknowledged
 * already) changes nothing and is counted (a warning for the first). A line that is neither form
 * stops {@code pgcdc} with an error naming the line.
 *
 * <p>SOURCE: {@code -} (stdin), {@code fd:N} (an inherited file descriptor, read through {@code
 * /dev/fd/N}), or a path: a FIFO or other non-regular file is read until its end, a regular file is
 * followed from its size at start as it grows (like {@code tail -f}). The end of a FIFO, a pipe or
 * stdin means the reader is gone.
 */
final class ReaderAcks {

  private static final Logger LOG = LoggerFactory.getLogger(ReaderAcks.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * What identifies a printed event in an acknowledgement line: a read row's chunk ({@code
   * snapshot.chunk}, its offset's snapshotChunk) besides its position, 0 for a change.
   */
  record Key(long txEndLsn, int eventIndex, long chunk) {
    static Key of(CdcOffset offset) {
      return new Key(offset.txEndLsn().asLong(), offset.eventIndex(), offset.snapshotChunk());
    }
  }

  private final String spec;
  private final Function<CdcOffset, CompletableFuture<Void>> acknowledge;
  private final Set<Key> beforeReprint = new HashSet<>(); // guarded by itself
  private final ConcurrentHashMap<Key, CdcOffset> awaiting = new ConcurrentHashMap<>();
  private final AtomicLong acknowledged = new AtomicLong();
  private final AtomicLong unknown = new AtomicLong();
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile CdcException failure;
  private volatile boolean outputClosed;

  /**
   * @param spec the {@code --acks-from} value, checked by {@link #check}
   * @param acknowledge called with the offset of each event the reader acknowledged; returns the
   *     source's {@code acknowledgeAsync} future
   */
  ReaderAcks(String spec, Function<CdcOffset, CompletableFuture<Void>> acknowledge) {
    this.spec = spec;
    this.acknowledge = acknowledge;
  }

  /**
   * Checks an {@code --acks-from} value before anything starts.
   *
   * @param spec the value
   * @throws CdcConfigurationException if it is not {@code -}, {@code fd:N} or an existing path
   */
  static void check(String spec) {
    if (spec.equals("-")) {
      return;
    }
    if (spec.startsWith("fd:")) {
      if (!spec.substring(3).matches("[0-9]{1,9}")) {
        throw new CdcConfigurationException(
            "--acks-from fd:N needs a file descriptor number, was \"" + spec + '"');
      }
      if (!Files.exists(Path.of("/dev/fd/" + spec.substring(3)))) {
        throw new CdcConfigurationException(
            "--acks-from "
                + spec
                + ": file descriptor "
                + spec.substring(3)
                + " is not open in this process; the process that starts pgcdc must pass it"
                + " (in a shell: pgcdc stream ... --acks-from "
                + spec
                + " "
                + spec.substring(3)
                + "<acks), or use - for stdin");
      }
      return;
    }
    if (!Files.exists(Path.of(spec))) {
      throw new CdcConfigurationException(
          "--acks-from "
              + spec
              + ": no such file; create it (a FIFO: mkfifo "
              + spec
              + "), or use - for stdin or fd:N");
    }
  }

  /** Starts reading on a daemon thread; opening a FIFO waits there for its writer. */
  void start() {
    // named after the thread that starts it (pgcdc-stream-SLOT): its log lines name the slot
    Thread reader = new Thread(this::read, Thread.currentThread().getName() + "-acks");
    reader.setDaemon(true); // blocked in a read of a pipe at exit
    reader.start();
  }

  /**
   * Records a printed event as awaiting its acknowledgement; call before printing it.
   *
   * @return true if the reader acknowledged this event already, as printed before a reconnect,
   *     while the source no longer knew its transaction: acknowledge it once printed
   */
  boolean printed(CdcOffset offset) {
    Key key = Key.of(offset);
    synchronized (beforeReprint) {
      if (beforeReprint.remove(key)) {
        return true;
      }
      awaiting.put(key, offset);
      return false;
    }
  }

  /** Returns the number of printed events not acknowledged by the reader yet. */
  int awaiting() {
    return awaiting.size();
  }

  /** Returns the number of events the reader acknowledged. */
  long acknowledged() {
    return acknowledged.get();
  }

  /** Returns whether the source of acknowledgements ended (end of file, or a failure). */
  boolean ended() {
    return ended.getCount() == 0;
  }

  /**
   * Waits until the source of acknowledgements ended.
   *
   * @param millis the longest wait
   * @return whether it ended
   * @throws InterruptedException if interrupted
   */
  boolean awaitEnd(long millis) throws InterruptedException {
    return ended.await(millis, TimeUnit.MILLISECONDS);
  }

  /** Returns the malformed-line or read failure that ended the reading, or null. */
  CdcException failure() {
    return failure;
  }

  /**
   * Says that stdout is closed: no more lines will be printed. A followed regular file is then read
   * to its current end and reading ends.
   */
  void outputClosed() {
    outputClosed = true;
  }

  private void read() {
    try {
      if (spec.equals("-")) {
        readLines(System.in, false);
      } else if (spec.startsWith("fd:")) {
        try (InputStream in = new FileInputStream("/dev/fd/" + spec.substring(3))) {
          readLines(in, false);
        }
      } else {
        Path path = Path.of(spec);
        boolean follow = Files.isRegularFile(path);
        try (InputStream in = new FileInputStream(path.toFile())) {
          if (follow) {
            in.skipNBytes(Files.size(path)); // acknowledgements of earlier runs are not ours
          }
          readLines(in, follow);
        }
      }
    } catch (IOException e) {
      failure = new CdcException("--acks-from " + spec + ": cannot read: " + e, e);
    } catch (CdcException e) {
      failure = e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (unknown.get() > 0) {
        LOG.info(
            "--acks-from {}: {} lines named events not awaiting acknowledgement",
            spec,
            unknown.get());
      }
      ended.countDown();
    }
  }

  private void readLines(InputStream in, boolean follow) throws IOException, InterruptedException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    byte[] buffer = new byte[8192];
    long lineNumber = 0;
    CountDownLatch never = new CountDownLatch(1);
    while (true) {
      int n = in.read(buffer);
      if (n < 0) {
        if (!follow) {
          if (line.size() > 0) {
            accept(line.toString(StandardCharsets.UTF_8), ++lineNumber); // last line, no '\n'
          }
          return;
        }
        if (outputClosed) {
          return; // nothing more is printed: the file's end is the end
        }
        never.await(50, TimeUnit.MILLISECONDS); // a regular file signals nothing when it grows
        continue;
      }
      for (int i = 0; i < n; i++) {
        if (buffer[i] == '\n') {
          accept(line.toString(StandardCharsets.UTF_8), ++lineNumber);
          line.reset();
        } else {
          line.write(buffer[i]);
        }
      }
    }
  }

  private void accept(String line, long lineNumber) {
    String text = line.strip();
    if (text.isEmpty()) {
      return;
    }
    Key key = parse(text, lineNumber);
    CdcOffset offset = awaiting.remove(key);
    if (offset == null) {
      if (unknown.getAndIncrement() == 0) {
        LOG.warn(
            "--acks-from {}: line {} names tx_end_lsn {} event_index {}, which no event printed"
                + " by this process awaits (printed by an earlier run, or acknowledged already);"
                + " ignored, as are later ones",
            spec,
            lineNumber,
            PgLsn.of(key.txEndLsn()),
            key.eventIndex());
      }
      return;
    }
    CompletableFuture<Void> done = acknowledge.apply(offset);
    acknowledged.incrementAndGet();
    // printed before a reconnect: until the server sends its transaction again the source does not
    // know it (acknowledgeAsync fails at once); the reprint is acknowledged on the reader's behalf
    if (done.isCompletedExceptionally()) {
      try {
        done.join();
      } catch (CompletionException e) {
        if (e.getCause() instanceof CdcCheckpointException) {
          CdcOffset again;
          synchronized (beforeReprint) {
            again = awaiting.remove(key); // reprinted meanwhile: acknowledge the reprint now
            if (again == null) {
              beforeReprint.add(key); // printed() acknowledges the reprint
            }
          }
          if (again != null) {
            acknowledge.apply(again);
          }
        }
      }
    }
  }

  private Key parse(String text, long lineNumber) {
    String lsn;
    String index;
    String chunk;
    if (text.startsWith("{")) {
      JsonNode node;
      try {
        node = JSON.readTree(text);
      } catch (JacksonException e) {
        throw malformed(lineNumber, text, "not JSON: " + e.getOriginalMessage());
      }
      JsonNode l = node.get("tx_end_lsn");
      JsonNode i = node.get("event_index");
      if (l == null || !l.isTextual() || i == null || !i.canConvertToInt()) {
        throw malformed(lineNumber, text, "no tx_end_lsn string and event_index number");
      }
      lsn = l.asText();
      index = Integer.toString(i.asInt());
      JsonNode snapshot = node.get("snapshot");
      JsonNode c = snapshot == null ? null : snapshot.get("chunk");
      if (snapshot != null && (c == null || !c.canConvertToLong())) {
        throw malformed(lineNumber, text, "a snapshot object without a chunk number");
      }
      chunk = c == null ? "0" : Long.toString(c.asLong());
    } else {
      String[] words = text.split("\\s+");
      if (words.length != 2 && words.length != 3) {
        throw malformed(lineNumber, text, "not two or three words");
      }
      lsn = words[0];
      index = words[1];
      chunk = words.length == 3 ? words[2] : "0";
    }
    PgLsn parsed;
    int eventIndex;
    long chunkNumber;
    try {
      parsed = PgLsn.parse(lsn);
      eventIndex = Integer.parseInt(index);
      chunkNumber = Long.parseLong(chunk);
    } catch (IllegalArgumentException e) {
      throw malformed(lineNumber, text, e.getMessage());
    }
    if (eventIndex < 0 || chunkNumber < 0) {
      throw malformed(lineNumber, text, "negative event_index or chunk");
    }
    return new Key(parsed.asLong(), eventIndex, chunkNumber);
  }

  private CdcException malformed(long lineNumber, String text, String why) {
    String shown = text.length() > 120 ? text.substring(0, 120) + "..." : text;
    return new CdcException(
        "--acks-from "
            + spec
            + ": line "
            + lineNumber
            + " is not an acknowledgement ("
            + why
            + "): \""
            + shown
            + "\"; write back each processed event's JSON line, or its tx_end_lsn and"
            + " event_index (and a read row's snapshot chunk) separated by spaces");
  }
}
