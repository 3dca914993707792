package io.datum.cdc.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.cli.common.StoreRemedies;
import io.datum.cdc.cli.common.StoreUris;
import io.datum.cdc.spi.CheckpointCodec;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code pgcdc checkpoint}: operator commands on checkpoint stores. */
@Command(
    name = "checkpoint",
    mixinStandardHelpOptions = true,
    description = "Inspect checkpoint stores, or delete a slot's checkpoint.",
    subcommands = {CheckpointCommand.Show.class, CheckpointCommand.Delete.class})
final class CheckpointCommand {

  /** The file name suffix of a slot's checkpoint in a {@code file:} store. */
  static final String FILE_SUFFIX = ".checkpoint";

  /**
   * Reads a slot's checkpoint from a {@code file:} store's directory without opening the store: no
   * lock (a running consumer holds it), nothing written. Files are replaced atomically by rename,
   * so the read is a complete checkpoint.
   *
   * @param directory the store's directory ({@link StoreUris#fileStoreDirectory})
   * @param store the store URI as given, for messages
   * @return the checkpoint, or empty if the store holds none for the slot
   * @throws CdcStoreException if the directory does not exist, or the file cannot be decoded (with
   *     the remedy)
   * @throws IOException if the file cannot be read
   */
  static Optional<CdcCheckpoint> readFileCheckpoint(Path directory, String store, String slot)
      throws IOException {
    if (!Files.isDirectory(directory)) {
      throw new CdcStoreException(
          "no checkpoint store at " + store + ": " + directory + " is not a directory");
    }
    Path file = directory.resolve(slot + FILE_SUFFIX);
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
    try {
      return Optional.of(CheckpointCodec.decode(bytes, slot, file.toString()));
    } catch (CdcStoreException e) {
      throw StoreRemedies.withRemedy(e, store, slot);
    }
  }

  /**
   * {@code pgcdc checkpoint delete --store URI --slot NAME --yes}: deletes a slot's checkpoint, so
   * that the next consumer resumes from the slot's own confirmed position (events acknowledged
   * after it, in the store only, come again). The store is opened, and so locked, as a consumer
   * opens it: a running consumer makes this fail.
   */
  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description =
          "Delete a slot's checkpoint from a store (stop its consumer first): the next consumer"
              + " resumes from the replication slot's own position.")
  static final class Delete implements Callable<Integer> {

    @Option(names = "--store", required = true, description = "checkpoint store URI")
    String store;

    @Option(names = "--slot", required = true, description = "the slot whose checkpoint goes")
    String slot;

    @Option(names = "--yes", description = "confirm the deletion (required)")
    boolean yes;

    @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
    boolean verbose;

    PrintStream out = System.out;

    @Override
    public Integer call() throws Exception {
      SlotNames.requireValid(slot);
      Show.requireExistingPath(store);
      if (!yes) {
        throw new CdcConfigurationException(
            "checkpoint delete needs --yes: the next consumer of slot \""
                + slot
                + "\" then resumes from the slot's confirmed_flush_lsn, and events acknowledged"
                + " after it come again");
      }
      Path fileStore = StoreUris.fileStoreDirectory(store);
      try (CdcCheckpointStore checkpoints = CheckpointStores.open(StoreUris.existingOnly(store))) {
        boolean present;
        if (fileStore != null) {
          // the file, not its decoded contents: a corrupt checkpoint can be deleted too
          present = Files.deleteIfExists(fileStore.resolve(slot + FILE_SUFFIX));
          if (present) {
            try (FileChannel dir = FileChannel.open(fileStore, StandardOpenOption.READ)) {
              dir.force(true);
            }
          }
        } else {
          present = checkpoints.load(slot).isPresent();
          if (present) {
            // the store API has no delete: a checkpoint at 0/0 acknowledges nothing, so the slot
            // resumes from its own position, as without a checkpoint
            checkpoints.store(CdcCheckpoint.atWatermark(slot, PgLsn.ZERO));
          }
        }
        if (!present) {
          throw new CdcException(
              "the store "
                  + checkpoints.location()
                  + " holds no checkpoint for slot \""
                  + slot
                  + '"');
        }
        out.println(
            "deleted the checkpoint of slot "
                + slot
                + " from "
                + checkpoints.location()
                + (fileStore != null ? "" : " (replaced by an empty one at 0/0)"));
        out.flush();
      }
      return 0;
    }
  }

  /**
   * {@code pgcdc checkpoint show --store URI [--slot NAME]}: prints what a store holds as one JSON
   * document on stdout: {@code {"store":..., "checkpoints":[{"slot":..., "watermark":...,
   * "acknowledged_beyond":[{"tx_end_lsn":..., "event_count":..., "acknowledged":[[from,to],...]}],
   * "acknowledged_runs":[{"first_tx_end_lsn":..., "last_tx_end_lsn":...}],
   * "cluster":{"system_identifier":"...", "timeline":n, "database":...}, "publication":...}]}}
   * (inclusive index ranges; a run: every transaction ending between the two LSNs, inclusive, is
   * fully acknowledged; {@code cluster} and {@code publication} are null for a checkpoint written
   * before datum-cdc recorded them).
   */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Print the checkpoints a store holds, as JSON.")
  static final class Show implements Callable<Integer> {

    @Option(names = "--store", required = true, description = "checkpoint store URI")
    String store;

    @Option(names = "--slot", description = "only this slot (default: every slot in the store)")
    String slot;

    @Option(names = "--verbose", description = "info logs and stack traces of errors on stderr")
    boolean verbose;

    PrintStream out = System.out;

    /**
     * Opening a store creates it; for showing one, a path that does not exist is a typo, not an
     * empty store.
     */
    /** The schemes of the stores that live at a path of the file system. */
    private static final java.util.Set<String> PATH_STORES =
        java.util.Set.of("file", "rocksdb", "mapdb");

    static void requireExistingPath(String uri) {
      URI parsed;
      try {
        parsed = new URI(uri);
      } catch (URISyntaxException e) {
        return; // CheckpointStores.open reports it
      }
      if (parsed.getScheme() == null
          || parsed.getAuthority() != null
          || !PATH_STORES.contains(parsed.getScheme())
          || !CheckpointStores.providers(CheckpointCommand.class.getClassLoader())
              .containsKey(parsed.getScheme())) {
        // unknown scheme or a host: CheckpointStores.open names the problem; a jdbc: store is a
        // database, not a path
        return;
      }
      String path = parsed.getPath() != null ? parsed.getPath() : parsed.getSchemeSpecificPart();
      if (path != null && path.indexOf('?') >= 0) {
        path = path.substring(0, path.indexOf('?'));
      }
      if (!parsed.getScheme().equals("memory")
          && path != null
          && !path.isEmpty()
          && !Files.exists(Path.of(path))) {
        throw new CdcStoreException(
            "no checkpoint store at " + uri + ": " + path + " does not exist");
      }
    }

    @Override
    public Integer call() throws Exception {
      if (slot != null) {
        SlotNames.requireValid(slot);
      }
      requireExistingPath(store);
      Path fileStore = StoreUris.fileStoreDirectory(store);
      if (fileStore != null) {
        // read-only: no lock (a running consumer holds it), no write permission needed
        print(fileStore.toUri().toString(), readFileStore(fileStore));
        return 0;
      }
      try (CdcCheckpointStore checkpoints = CheckpointStores.open(StoreUris.existingOnly(store))) {
        List<String> slots;
        if (slot != null) {
          slots = List.of(slot);
        } else {
          try {
            slots = new ArrayList<>(checkpoints.slots());
          } catch (UnsupportedOperationException e) {
            throw new CdcConfigurationException(
                "the store " + checkpoints.location() + " cannot list its slots; pass --slot NAME");
          }
        }
        List<CdcCheckpoint> found = new ArrayList<>();
        for (String s : slots) {
          Optional<CdcCheckpoint> checkpoint;
          try {
            checkpoint = checkpoints.load(s);
          } catch (CdcStoreException e) {
            throw StoreRemedies.withRemedy(e, store, s);
          }
          checkpoint.ifPresent(found::add);
        }
        print(checkpoints.location(), found);
      }
      return 0;
    }

    /**
     * Reads the checkpoint files of a {@code file:} store directly: files are replaced atomically
     * by rename, so each read is a complete checkpoint, and nothing is locked or written.
     */
    private List<CdcCheckpoint> readFileStore(Path directory) throws IOException {
      List<String> slots = new ArrayList<>();
      if (slot != null) {
        slots.add(slot);
      } else {
        try (DirectoryStream<Path> entries =
            Files.newDirectoryStream(directory, "*" + FILE_SUFFIX)) {
          for (Path entry : entries) {
            String name = entry.getFileName().toString();
            String s = name.substring(0, name.length() - FILE_SUFFIX.length());
            if (SlotNames.isValid(s)) {
              slots.add(s);
            }
          }
        }
        slots.sort(null);
      }
      List<CdcCheckpoint> found = new ArrayList<>();
      for (String s : slots) {
        Path file = directory.resolve(s + FILE_SUFFIX);
        byte[] bytes;
        try {
          bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
          continue;
        }
        try {
          found.add(CheckpointCodec.decode(bytes, s, file.toString()));
        } catch (CdcStoreException e) {
          throw StoreRemedies.withRemedy(e, store, s);
        }
      }
      return found;
    }

    private void print(String location, List<CdcCheckpoint> found) throws IOException {
      if (slot != null && found.isEmpty()) {
        throw new CdcException(
            "the store " + location + " holds no checkpoint for slot \"" + slot + '"');
      }
      List<Map<String, Object>> described = new ArrayList<>();
      for (CdcCheckpoint c : found) {
        described.add(describe(c));
      }
      Map<String, Object> document = new LinkedHashMap<>();
      document.put("store", location);
      document.put("checkpoints", described);
      ObjectMapper json =
          new ObjectMapper()
              .enable(SerializationFeature.INDENT_OUTPUT)
              .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
      json.writeValue(out, document);
      out.println();
      out.flush();
    }

    private static Map<String, Object> describe(CdcCheckpoint checkpoint) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("slot", checkpoint.slot());
      c.put("watermark", checkpoint.watermark().toString());
      List<Map<String, Object>> beyond = new ArrayList<>();
      for (CdcCheckpoint.PartialTransaction tx : checkpoint.acknowledgedBeyond()) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("tx_end_lsn", tx.txEndLsn().toString());
        t.put("event_count", tx.eventCount());
        t.put("acknowledged", ranges(tx));
        beyond.add(t);
      }
      c.put("acknowledged_beyond", beyond);
      List<Map<String, Object>> runs = new ArrayList<>();
      for (CdcCheckpoint.AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("first_tx_end_lsn", run.firstTxEndLsn().toString());
        r.put("last_tx_end_lsn", run.lastTxEndLsn().toString());
        runs.add(r);
      }
      c.put("acknowledged_runs", runs);
      ClusterIdentity cluster = checkpoint.cluster();
      if (cluster == null) {
        c.put("cluster", null);
      } else {
        Map<String, Object> k = new LinkedHashMap<>();
        k.put("system_identifier", cluster.systemIdentifierText());
        k.put("timeline", cluster.timeline());
        k.put("database", cluster.database());
        c.put("cluster", k);
      }
      c.put("publication", checkpoint.publication());
      SnapshotProgress snapshot = checkpoint.snapshot();
      if (!snapshot.equals(SnapshotProgress.NONE)) { // absent when no snapshot ever ran
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("initial_completed", snapshot.initialCompleted());
        m.put("hold_lsn", snapshot.holdLsn() == null ? null : snapshot.holdLsn().toString());
        List<Map<String, Object>> tables = new ArrayList<>();
        for (SnapshotProgress.TableSnapshot t : snapshot.tables()) {
          Map<String, Object> table = new LinkedHashMap<>();
          table.put("id", t.snapshotId());
          table.put("schema", t.table().schema());
          table.put("table", t.table().table());
          table.put("key_ranges_left", t.remaining().size());
          tables.add(table);
        }
        m.put("in_progress", tables);
        c.put("snapshot", m);
      }
      return c;
    }

    /** Inclusive {@code [from, to]} ranges, as the file store writes them. */
    private static List<int[]> ranges(CdcCheckpoint.PartialTransaction tx) {
      int[] halfOpen = tx.acknowledgedRanges();
      List<int[]> ranges = new ArrayList<>();
      for (int i = 0; i < halfOpen.length; i += 2) {
        ranges.add(new int[] {halfOpen[i], halfOpen[i + 1] - 1});
      }
      return ranges;
    }
  }
}
