import { gemini, openai } from './index';

const usage = { inputTokens: 5, outputTokens: 0, cachedTokens: 0 };

describe('openai embeddings', () => {
  it('parses string and string[] input, keeps dimensions and encoding_format', () => {
    expect(openai.parseEmbeddingRequest({ model: 'e', input: 'a' })).toEqual({ model: 'e', inputs: ['a'] });
    expect(openai.parseEmbeddingRequest({ model: 'e', input: ['a', 'b'], dimensions: 64, encoding_format: 'float' }))
      .toEqual({ model: 'e', inputs: ['a', 'b'], dimensions: 64, encodingFormat: 'float' });
  });

  it('asks upstream for base64 and reads base64 or float arrays back, in index order', () => {
    expect(openai.formatEmbeddingRequest({ model: 'e', inputs: ['a'], dimensions: 8 })).toEqual({ path: '/embeddings', body: { model: 'e', input: ['a'], encoding_format: 'base64', dimensions: 8 } });
    const b64 = Buffer.from(new Float32Array([0.5, -2]).buffer).toString('base64');
    const res = openai.parseEmbeddingResponse({
      object: 'list', model: 'e', usage: { prompt_tokens: 5, total_tokens: 5 },
      data: [{ object: 'embedding', index: 1, embedding: [1, 2] }, { object: 'embedding', index: 0, embedding: b64 }],
    });
    expect(res).toEqual({ model: 'e', vectors: [[0.5, -2], [1, 2]], usage });
  });

  it('formats float or base64 for the client', () => {
    const res = { model: 'e', vectors: [[0.25, 3]], usage };
    expect(openai.formatEmbeddingResponse(res)).toEqual({ object: 'list', model: 'e', data: [{ object: 'embedding', index: 0, embedding: [0.25, 3] }], usage: { prompt_tokens: 5, total_tokens: 5 } });
    const b64 = openai.formatEmbeddingResponse(res, { encodingFormat: 'base64' }) as { data: Array<{ embedding: string }> };
    expect(openai.parseEmbeddingResponse(b64).vectors).toEqual([[0.25, 3]]);
  });
});

describe('gemini embeddings', () => {
  it('formats :batchEmbedContents and reads both response shapes', () => {
    expect(gemini.formatEmbeddingRequest({ model: 'e', inputs: ['a', 'b'], dimensions: 4 })).toEqual({
      path: '/v1beta/models/e:batchEmbedContents',
      body: { requests: [{ model: 'models/e', content: { parts: [{ text: 'a' }] }, outputDimensionality: 4 }, { model: 'models/e', content: { parts: [{ text: 'b' }] }, outputDimensionality: 4 }] },
    });
    expect(gemini.parseEmbeddingResponse({ embeddings: [{ values: [1] }, { values: [2] }] }, 'e').vectors).toEqual([[1], [2]]);
    expect(gemini.parseEmbeddingResponse({ embedding: { values: [3] } }).vectors).toEqual([[3]]);
  });

  it('formats :embedContent and :batchEmbedContents responses', () => {
    const res = { model: 'e', vectors: [[1, 2], [3, 4]], usage };
    expect(gemini.formatEmbedContentResponse(res)).toEqual({ embedding: { values: [1, 2] } });
    expect(gemini.formatBatchEmbedContentsResponse(res)).toEqual({ embeddings: [{ values: [1, 2] }, { values: [3, 4] }] });
  });

  it('parses :embedContent and :batchEmbedContents requests', () => {
    expect(gemini.parseEmbedContentRequest({ content: { parts: [{ text: 'a' }] } }, { model: 'e' })).toEqual({ model: 'e', inputs: ['a'] });
    expect(gemini.parseBatchEmbedContentsRequest({ requests: [{ model: 'models/e', content: { parts: [{ text: 'a' }] }, outputDimensionality: 3 }, { content: { parts: [{ text: 'b' }] } }] }))
      .toEqual({ model: 'e', inputs: ['a', 'b'], dimensions: 3 });
  });
});
