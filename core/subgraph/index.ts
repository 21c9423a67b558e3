export * from './define';
export * from './server';
export * from './build-schema';
