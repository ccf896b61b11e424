package io.redlock.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Tells the launcher ({@code ./redlock}) that the class-data sharing archive this JVM writes as
 * it exits is worth keeping: the launcher names that file in {@value #PROPERTY}, and keeps it
 * only if {@code FILE.connected} exists by the next run. An {@code exec} marks it once its
 * Redis client is up (every node connected or tried); a run that stopped before ({@code
 * --help}, bad arguments, a bad configuration) loaded too few of the classes that matter, and
 * its archive is thrown away, so that a later run writes a useful one. Without the property
 * (not started by the launcher, or an archive already in place) this does nothing.
 */
final class LauncherArchive {

  /** The system property naming the archive this JVM writes as it exits. */
  static final String PROPERTY = "redlock.cds.archive";

  private LauncherArchive() {}

  /** Marks this run's archive worth keeping; a failure only means it is not kept. */
  static void connected() {
    String archive = System.getProperty(PROPERTY);
    if (archive == null || archive.isEmpty()) {
      return;
    }
    try {
      Files.write(Path.of(archive + ".connected"), new byte[0]);
    } catch (IOException | InvalidPathException e) {
      // not kept: the next exec writes another
    }
  }
}
