-- Who ended a workflow short of its goal (policy, prompt, person,
-- no_answer, asker_gone, interrupt): the words and exit code of its outcome
-- come from it, never from the reason's text.
ALTER TABLE workflows ADD COLUMN cause TEXT NOT NULL DEFAULT '';
-- How many times a locate's quote was sent again after a proven loss.
ALTER TABLE workflows ADD COLUMN resends INTEGER NOT NULL DEFAULT 0;
