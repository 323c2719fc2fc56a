"""The live market-data feed: sources (replay, synthetic, ccxt), the bar builder, the feed actor and bin/feed."""
