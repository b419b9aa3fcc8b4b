package dev.gpudf.sql.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import org.apache.calcite.avatica.AvaticaConnection;
import org.apache.calcite.avatica.DriverVersion;
import org.apache.calcite.avatica.Meta;
import org.apache.calcite.avatica.UnregisteredDriver;

/**
 * The {@code jdbc:gpudf:} driver. URL properties (after the prefix, {@code ;}-separated, or in
 * the connection {@code Properties}): {@code path} (a directory whose {@code *.arrow} and
 * {@code *.csv} files become tables) and {@code backend} ({@code cpu}, {@code gpu}, or
 * {@code auto}, the default: the GPU when one is usable). Example:
 * {@code jdbc:gpudf:path=/data;backend=cpu}. Each connection owns a session and closes it,
 * except with {@code session=ID} (the URL of {@code GpuSession.jdbcUrl()}), which connects to that
 * open session of this JVM and leaves it open.
 */
public final class GpudfDriver extends UnregisteredDriver {
  static {
    new GpudfDriver().register();
  }

  @Override
  protected String getConnectStringPrefix() {
    return "jdbc:gpudf:";
  }

  @Override
  protected DriverVersion createDriverVersion() {
    return new DriverVersion("gpudf JDBC driver", "0.1.0", "gpudf", "0.1.0", true, 0, 1, 0, 1);
  }

  /** Connects and opens the connection's session (loading the tables of {@code path}). */
  @Override
  public Connection connect(String url, Properties info) throws SQLException {
    Connection c = super.connect(url, info);
    if (c == null) {
      return null;
    }
    try {
      ((AvaticaConnection) c).openConnection();
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw new SQLException("cannot open " + url + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Meta createMeta(AvaticaConnection connection) {
    return new GpudfMeta(connection);
  }
}
