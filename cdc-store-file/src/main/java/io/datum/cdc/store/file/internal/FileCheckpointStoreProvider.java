package io.datum.cdc.store.file.internal;

import com.google.auto.service.AutoService;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CheckpointStoreProvider;
import io.datum.cdc.store.file.FileCheckpointStore;
import java.net.URI;
import java.nio.file.Path;

/**
 * Provides {@code file:} stores: {@code file:/var/lib/app/cdc} (absolute), {@code
 * file:///var/lib/app/cdc}, or {@code file:rel/dir} (relative to the working directory). Not API;
 * use {@link io.datum.cdc.CheckpointStores#open(URI)} or {@link FileCheckpointStore#open}.
 */
@AutoService(CheckpointStoreProvider.class)
public final class FileCheckpointStoreProvider implements CheckpointStoreProvider {

  /** Called by {@link java.util.ServiceLoader}. */
  public FileCheckpointStoreProvider() {}

  /** Returns {@code file}. */
  @Override
  public String scheme() {
    return "file";
  }

  /** Returns a one-line description of the URI form. */
  @Override
  public String description() {
    return "file:/dir - one binary file per slot, fsynced on every store (cdc-store-file)";
  }

  /**
   * Opens a {@link FileCheckpointStore} on the directory the URI names.
   *
   * @param uri a {@code file:} URI naming a directory, without host, query or fragment
   * @return the open store
   * @throws CdcConfigurationException if the URI is not of that form (the message quotes it)
   * @throws io.datum.cdc.CdcStoreException as {@link FileCheckpointStore#open}
   */
  @Override
  public CdcCheckpointStore open(URI uri) {
    return FileCheckpointStore.open(directoryOf(uri));
  }

  /**
   * Returns the directory a {@code file:} URI names.
   *
   * @param uri the URI
   * @return the directory, absolute or relative to the working directory
   * @throws CdcConfigurationException if the URI is not a {@code file:} URI naming a directory
   */
  static Path directoryOf(URI uri) {
    if (uri.getScheme() == null || !uri.getScheme().equalsIgnoreCase("file")) {
      throw invalid(uri, "the scheme must be file");
    }
    if (uri.getRawFragment() != null
        || uri.getRawQuery() != null
        || (uri.isOpaque() && uri.getRawSchemeSpecificPart().contains("?"))) {
      throw invalid(uri, "a query or fragment is not allowed");
    }
    try {
      if (uri.isOpaque()) {
        return Path.of(uri.getSchemeSpecificPart()); // file:rel/dir
      }
      if (uri.getRawAuthority() != null) {
        throw invalid(uri, "a host is not allowed; use file:/absolute/dir or file:relative/dir");
      }
      String path = uri.getPath();
      if (path == null || path.isEmpty() || path.equals("/")) {
        throw invalid(uri, "it names no directory; use file:/absolute/dir or file:relative/dir");
      }
      return Path.of(uri);
    } catch (IllegalArgumentException e) { // also java.nio.file.InvalidPathException
      throw new CdcConfigurationException(
          "invalid file checkpoint store URI \"" + uri + "\": " + e.getMessage(), e);
    }
  }

  private static CdcConfigurationException invalid(URI uri, String why) {
    return new CdcConfigurationException(
        "invalid file checkpoint store URI \"" + uri + "\": " + why);
  }
}
