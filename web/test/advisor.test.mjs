// The advisor page's pure parts (web/js/pages/advisor.js): which amounts of work each kind of model
// and task takes, and how the work an estimate was made for is said. The module touches no DOM when
// it is imported, so Node imports it as the browser does.
import assert from 'node:assert/strict';
import {test} from 'node:test';

import {workFields, workText} from '../js/pages/advisor.js';

test('each kind of model and task asks for its own amounts of work', () => {
  assert.deepEqual(Object.keys(workFields('diffusion', 'infer')), ['images', 'requests']);
  assert.deepEqual(Object.keys(workFields('vision', 'train')), ['samples', 'epochs']);
  assert.deepEqual(Object.keys(workFields('vision', 'infer')), ['images']);
  assert.deepEqual(Object.keys(workFields('encoder', 'finetune')), ['tokens', 'samples', 'epochs']);
  assert.deepEqual(Object.keys(workFields('encoder', 'serve')), ['samples', 'requests']);
  assert.deepEqual(Object.keys(workFields('decoder_lm', 'lora')), ['tokens', 'samples', 'epochs']);
  assert.deepEqual(Object.keys(workFields('decoder_lm', 'serve')), ['tokens', 'requests']);
  assert.equal(workFields('diffusion', 'infer').images, 'Images to generate');
});

test('the work an estimate was made for is said in words', () => {
  assert.equal(workText({work: {images: 5000}}), '5,000 images');
  assert.equal(workText({work: {samples: 10000, epochs: 3}}), '10,000 samples × 3 epochs');
  assert.equal(workText({work: {samples: 10000, epochs: 1}}), '10,000 samples');
  assert.equal(workText({work: {tokens: 1e9, requests: 20}}), '1,000,000,000 tokens, 20 requests');
  assert.equal(
    workText({work: {tokens: 1e6, assumed: true}}),
    '1,000,000 tokens (assumed: give an amount for your job)',
  );
  assert.equal(workText({}), 'a default amount of work');
});
