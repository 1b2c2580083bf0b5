// YOUR STRATEGY GOES HERE (bot.js and session_bot.js both play it).
'use strict';

// Return one of decision.legal_moves, unchanged, and an optional note about it (plain text:
// your reasoning; recorded with the move, never shown to the other seats during the match).
// decision.view is everything your seat may see (fields in proto/referee/v1/<game>.proto),
// decision.kind names the choice (e.g. "batavia.auction"). This bot picks at random, which is
// legal in every game.
function choose(decision, random) {
  const moves = decision.legal_moves || [];
  const pick = Math.floor(random() * moves.length);
  return { move: moves[pick], note: `${decision.kind}: move ${pick + 1} of ${moves.length}, at random` };
}

// Called when the referee refused a move of yours: refusal.reason (ILLEGAL_MOVE, MALFORMED...)
// and refusal.message (the rule) say why. Unless refusal.final, `choose` is then asked again
// for the same decision.
function onRefused(refusal) {}  // eslint-disable-line no-unused-vars

module.exports = { choose, onRefused };
