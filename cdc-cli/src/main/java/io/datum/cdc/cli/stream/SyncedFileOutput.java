package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.event.ChangeEvent;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The output of {@code pgcdc stream --output FILE}: appends each event's JSON line to FILE and
 * releases an event (acknowledges it) only once an fsync ({@code fdatasync}) covered its line. One
 * flusher thread syncs while the handler goes on writing; each sync covers every line written
 * before it began, so a burst costs one sync per batch rather than one per event, and a lone event
 * waits for one sync.
 *
 * <p>FILE is locked while open (a second {@code pgcdc} on it fails). A last line without its {@code
 * '\n'} (a process or the machine died while writing it; its event was never acknowledged, so it
 * comes again) is cut off at open, with a warning.
 */
final class SyncedFileOutput implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SyncedFileOutput.class);

  private final Path path;
  private final FileChannel channel;
  private final FileLock fileLock;
  private final JsonLinesWriter writer;
  private final Consumer<CdcOffset> release;
  private final Consumer<CdcException> onFailure;
  private final Object lock = new Object();
  private final Thread flusher;
  private List<CdcOffset> unsynced = new ArrayList<>();
  private int syncing;
  private boolean closed;

  private SyncedFileOutput(
      Path path,
      FileChannel channel,
      FileLock fileLock,
      Consumer<CdcOffset> release,
      Consumer<CdcException> onFailure) {
    this.path = path;
    this.channel = channel;
    this.fileLock = fileLock;
    this.release = release;
    this.onFailure = onFailure;
    this.writer =
        new JsonLinesWriter(new BufferedOutputStream(Channels.newOutputStream(channel), 1 << 16));
    // named after the thread that starts it (pgcdc-stream-SLOT): its log lines name the slot
    this.flusher = new Thread(this::flushLoop, Thread.currentThread().getName() + "-output-sync");
    this.flusher.setDaemon(true);
    this.flusher.start();
  }

  /**
   * Opens (or creates) FILE for appending.
   *
   * @param path the file
   * @param release called, on the flusher thread, with each event's offset once its line is synced
   * @param onFailure called once if a write or sync fails (the events not synced are not released)
   * @return the output
   * @throws CdcConfigurationException if the file cannot be opened or is locked by another process
   */
  static SyncedFileOutput open(
      Path path, Consumer<CdcOffset> release, Consumer<CdcException> onFailure) {
    Path absolute = path.toAbsolutePath();
    boolean created = !Files.exists(absolute);
    FileChannel channel;
    try {
      channel =
          FileChannel.open(
              absolute,
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new CdcConfigurationException(cannotOpen(path, absolute, e), e);
    }
    try {
      FileLock fileLock = channel.tryLock();
      if (fileLock == null) {
        throw new CdcConfigurationException(
            "--output "
                + path
                + " is locked by another process (another pgcdc stream --output on it?); stop"
                + " it or write to another file");
      }
      cutIncompleteLastLine(path, channel);
      channel.position(channel.size());
      if (created && absolute.getParent() != null) {
        try (FileChannel dir = FileChannel.open(absolute.getParent(), StandardOpenOption.READ)) {
          dir.force(true); // the new file's directory entry
        }
      }
      return new SyncedFileOutput(path, channel, fileLock, release, onFailure);
    } catch (IOException | RuntimeException e) {
      try {
        channel.close();
      } catch (IOException closing) {
        e.addSuppressed(closing);
      }
      if (e instanceof CdcConfigurationException c) {
        throw c;
      }
      throw new CdcConfigurationException("--output " + path + ": cannot open: " + e, e);
    }
  }

  /** Why FILE cannot be opened, and what to do, for the common causes; else the JDK's words. */
  private static String cannotOpen(Path path, Path absolute, IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException && absolute.getParent() != null) {
      return "--output "
          + path
          + ": its directory "
          + absolute.getParent()
          + " does not exist; create it first, or name a file in an existing directory";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "--output "
          + path
          + ": permission denied; name a file this user may create or write, or change the"
          + " permissions of "
          + (Files.exists(absolute) || absolute.getParent() == null
              ? absolute
              : absolute.getParent());
    }
    if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
      return "--output " + path + ": cannot open: " + f.getReason();
    }
    return "--output " + path + ": cannot open: " + e;
  }

  /** How every line pgcdc writes begins (docs/json-lines.md: {@code op} first). */
  private static final byte[] LINE_START = "{\"op\":\"".getBytes(StandardCharsets.US_ASCII);

  /**
   * Checks that the file is pgcdc's own (its last line, and an incomplete line after it, begin as
   * pgcdc's lines do), then removes the incomplete last line a process that died while writing
   * left. A file of anything else is refused, not changed.
   *
   * @throws CdcConfigurationException naming the file if it is not a file of pgcdc's lines
   */
  private static void cutIncompleteLastLine(Path path, FileChannel channel) throws IOException {
    long size = channel.size();
    if (size == 0) {
      return;
    }
    long lastNewline = lastNewlineBefore(channel, size);
    long torn = lastNewline + 1;
    if (torn < size) {
      requireOwnLine(path, channel, torn, size, "its incomplete last line", true);
    }
    if (lastNewline >= 0) {
      long start = lastNewlineBefore(channel, lastNewline) + 1;
      requireOwnLine(path, channel, start, lastNewline, "its last line", false);
    }
    if (torn < size) {
      LOG.warn(
          "--output {}: removed an incomplete last line ({} bytes, written by a process that died;"
              + " its event was not acknowledged and comes again)",
          path,
          size - torn);
      channel.truncate(torn);
      channel.force(false);
    }
  }

  /** The offset of the last {@code '\n'} before {@code end}, or -1. */
  private static long lastNewlineBefore(FileChannel channel, long end) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(8192);
    while (end > 0) {
      long from = Math.max(0, end - buffer.capacity());
      buffer.clear().limit((int) (end - from));
      while (buffer.hasRemaining()) {
        if (channel.read(buffer, from + buffer.position()) < 0) {
          throw new IOException("file shrank while read");
        }
      }
      for (int i = (int) (end - from) - 1; i >= 0; i--) {
        if (buffer.get(i) == '\n') {
          return from + i;
        }
      }
      end = from;
    }
    return -1;
  }

  /**
   * Refuses a line that does not begin as pgcdc's lines do (a cut one may be shorter than that
   * beginning, but not differ from it).
   */
  private static void requireOwnLine(
      Path path, FileChannel channel, long start, long end, String what, boolean mayBeCut)
      throws IOException {
    int n = (int) Math.min(LINE_START.length, end - start);
    ByteBuffer head = ByteBuffer.allocate(n);
    while (head.hasRemaining()) {
      if (channel.read(head, start + head.position()) < 0) {
        throw new IOException("file shrank while read");
      }
    }
    boolean own = mayBeCut || n == LINE_START.length;
    for (int i = 0; i < n && own; i++) {
      own = head.get(i) == LINE_START[i];
    }
    if (!own) {
      throw new CdcConfigurationException(
          "--output "
              + path
              + ": "
              + what
              + " is not a line pgcdc writes (it does not begin with {\"op\":\"); pgcdc appends"
              + " only to a file of its own JSON lines and changes no other file: name a new file"
              + " (or one an earlier pgcdc --output wrote)");
    }
  }

  /**
   * Appends one event's line; it is released once synced. Does nothing after {@link #close}.
   *
   * @param event the event
   * @param redelivered whether its line says {@code "redelivered":true}
   * @throws java.io.UncheckedIOException if the write fails
   */
  void write(ChangeEvent event, boolean redelivered) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      writer.write(event, redelivered);
      unsynced.add(event.offset());
      lock.notifyAll();
    }
  }

  /** Returns whether every line written was synced and released. */
  boolean idle() {
    synchronized (lock) {
      return unsynced.isEmpty() && syncing == 0;
    }
  }

  private void flushLoop() {
    try {
      while (true) {
        List<CdcOffset> batch;
        synchronized (lock) {
          while (unsynced.isEmpty() && !closed) {
            lock.wait();
          }
          if (unsynced.isEmpty()) {
            return; // closed, everything released
          }
          writer.flush(); // into the file: the sync below covers these lines
          batch = unsynced;
          unsynced = new ArrayList<>();
          syncing = batch.size();
        }
        channel.force(false);
        batch.forEach(release);
        synchronized (lock) {
          syncing = 0;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException | RuntimeException e) {
      synchronized (lock) {
        closed = true; // nothing more is written: the events not synced come again
      }
      onFailure.accept(
          new CdcException(
              "--output " + path + ": cannot write or sync (events not synced come again): " + e,
              e));
    }
  }

  /**
   * Writes nothing more, syncs and releases what was written, and closes the file. Idempotent.
   *
   * @throws InterruptedException if interrupted while the last sync runs
   */
  @Override
  public void close() throws InterruptedException {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    flusher.join();
    try {
      if (channel.isOpen()) {
        fileLock.release();
        channel.close();
      }
    } catch (IOException e) {
      // every released line was synced before; closing loses nothing
      LOG.warn("--output {}: closing failed: {}", path, e.toString());
    }
  }
}
