package io.thallus.cli.sidebyside;

/** A peer whose name and kind are fixed when it is made; what it pulls is the subclass's. */
public abstract class NamedPeer implements Peer {
  private final String name;
  private final Kind kind;

  protected NamedPeer(String name, Kind kind) {
    this.name = name;
    this.kind = kind;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final Kind kind() {
    return kind;
  }
}
