import { Timestamp } from 'bson';

// Cluster time for catalog timestamps (topologyTime, collection and database timestamps, chunk
// history): wall-clock seconds with an increment, strictly increasing within this process.
export class ClusterClock {
  private lastSeconds = 0;
  private increment = 0;

  now(): Timestamp {
    const seconds = Math.floor(Date.now() / 1000);
    if (seconds > this.lastSeconds) {
      this.lastSeconds = seconds;
      this.increment = 1;
    } else {
      this.increment += 1;
    }
    return new Timestamp({ t: this.lastSeconds, i: this.increment });
  }
}
